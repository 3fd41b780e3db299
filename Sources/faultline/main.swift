import CLI
import CMalloc
import Glibc
import ProxyShell
import Vocabulary

/// `faultline`: record-and-replay WebSocket proxy and lifecycle analyzer. This file only
/// wires commands together; each command lives in its own file.
let tool = CommandLineTool(
    root: CommandRegistry.root,
    version: FaultlineVersion.long,
    commands: CommandRegistry.commands,
    groups: CommandRegistry.groups,
    extras: CommandExamples.table,
    manSections: CommandRegistry.manSections)

// glibc raises its mmap threshold to the size of each large block freed, after which large
// buffers (the report of a capture of many clients, the read and routing buffers) come
// from the heap and leave holes in it when freed: peak RSS then grows by tens of
// megabytes over what is in use. A fixed threshold keeps them mapped and returned on free.
_ = mallopt(M_MMAP_THRESHOLD, 1 << 20)
// One heap for every thread: with `analyze --jobs 2`, glibc gave the reading thread and each
// worker an arena of its own, each keeping its own free holes, and peak RSS at 2,000 clients
// was some 9 MB higher for it at 400 MB of input (docs/benchmarks.md, "Flat memory, fifth
// round"). Small blocks still come from each thread's own cache without a lock.
_ = mallopt(M_ARENA_MAX, 1)

exit(tool.main(Array(CommandLine.arguments.dropFirst())))
