import CLI

/// Every subcommand, in the order `--help` lists them: the main jobs first, then the
/// helpers. Adding a command is one line here.
enum CommandRegistry {
    static let commands: [any Command.Type] = [
        ProxyCommand.self,
        AnalyzeCommand.self,
        ReplayCommand.self,
        FramesCommand.self,
        SpecsCommand.self,
        CtlCommand.self,
        CertCommand.self,
        ExportCommand.self,
        SynthCommand.self,
        DemoCommand.self,
    ]
    static let groups: [CommandGroup] = [
        SimCommands.group,
    ]
}
