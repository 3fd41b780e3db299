import CLI
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

exit(tool.main(Array(CommandLine.arguments.dropFirst())))
