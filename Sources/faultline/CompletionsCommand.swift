import CLI

/// `faultline completions bash|zsh|fish`: prints the completion script for a shell,
/// generated from the command tables (CommandRegistry), so it never lags behind them.
enum CompletionsCommand: Command {
    static let spec = CommandSpec(
        name: "completions",
        abstract: "Print the shell completion script for bash, zsh or fish.",
        discussion: """
            The Debian package installs all three. By hand:
              bash: faultline completions bash > ~/.local/share/bash-completion/completions/faultline
              zsh:  faultline completions zsh > ~/.zfunc/_faultline  (with ~/.zfunc in $fpath)
              fish: faultline completions fish > ~/.config/fish/completions/faultline.fish
            """,
        arguments: [ArgumentSpec("shell", help: "The shell.", choices: CompletionScript.shells)])

    static func run(_ arguments: ParsedArguments) throws -> Int32 {
        let shell = arguments.positionals[0]
        guard let script = CompletionScript.script(for: shell, root: CommandRegistry.tree) else {
            throw UsageError("faultline completions: unknown shell '\(shell)' (expected one of: \(CompletionScript.shells.joined(separator: ", ")))")
        }
        Console.out(script)
        return ExitStatus.success
    }
}
