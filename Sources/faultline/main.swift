import CLI
import Glibc

/// `faultline`: record-and-replay WebSocket proxy and lifecycle analyzer. This file only
/// wires commands together; each command lives in its own file.
let tool = CommandLineTool(
    root: CommandSpec(
        name: "faultline",
        abstract: "Record, break, replay and check realtime WebSocket connections.",
        discussion: """
            A man-in-the-middle WebSocket proxy that records every frame and injects faults,
            an analyzer that checks each client's connection lifecycle against its spec, and
            a replayer that plays a recorded session back.
            """),
    version: FaultlineVersion.tool,
    commands: CommandRegistry.commands,
    groups: CommandRegistry.groups,
    extras: CommandExamples.table)

exit(tool.main(Array(CommandLine.arguments.dropFirst())))
