import CLI
import ProxyShell
import Vocabulary

/// Every subcommand, in the order `--help` lists them: the main jobs first, then the
/// helpers. Adding a command is one line here.
enum CommandRegistry {
    static let root = CommandSpec(
        name: "faultline",
        abstract: "Record, break, replay and check realtime WebSocket connections.",
        discussion: """
            A man-in-the-middle WebSocket proxy that records every frame and injects faults,
            an analyzer that checks each client's connection lifecycle against its spec, and
            a replayer that plays a recorded session back.
            """)
    static let commands: [any Command.Type] = [
        ProxyCommand.self,
        AnalyzeCommand.self,
        ReplayCommand.self,
        FramesCommand.self,
        SpecsCommand.self,
        CtlCommand.self,
        CertCommand.self,
        ExportCommand.self,
        UICommand.self,
        SynthCommand.self,
        DemoCommand.self,
        CompletionsCommand.self,
    ]
    static let groups: [CommandGroup] = [
        SimCommands.group,
    ]

    /// The whole command tree, as `--help` and the completion scripts see it.
    static var tree: CommandSpec {
        CommandLineTool(root: root, version: FaultlineVersion.long, commands: commands, groups: groups).root
    }

    /// What the manual page says beyond the commands' own help.
    static let manSections = [
        ManPage.Section(title: "ENVIRONMENT", text: """
            FAULTLINE_SPECS
                A folder whose NAME.json replaces the built-in spec NAME (bird, agora-rtm, ...),
                which are otherwise part of the binary.
            FAULTLINE_PROGRESS_DELAY
                Seconds before analyze, export and synth show their progress line on a
                terminal's standard error (default 1); off a terminal it is never shown.
            """),
        ManPage.Section(title: "SEE ALSO", text: """
            The README and the docs folder: /usr/share/doc/faultline/ in the Debian package.
            """),
    ]
}
