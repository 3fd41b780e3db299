import CLI

/// Every subcommand, in the order `--help` lists them. Adding a command is one line here.
enum CommandRegistry {
    static let commands: [any Command.Type] = [
        FramesCommand.self,
        AnalyzeCommand.self,
        SynthCommand.self,
        ProxyCommand.self,
        CertCommand.self,
    ]
    static let groups: [CommandGroup] = [
        SimCommands.group,
    ]
}
