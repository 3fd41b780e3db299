/// What a shell should offer for an option's value or a positional argument, derived from
/// the declarations so completion scripts follow the command tables with no second list.
public enum ValueCompletion: Equatable, Sendable {
    /// A flag: no value follows.
    case flag
    /// A value the shell cannot guess (an address, a number): nothing is offered.
    case free
    case files
    case directories
    /// One of these words (an option's `choices`).
    case words([String])

    /// `--format <format>` with choices offers them; `<file>` and `<name|file>` offer
    /// files, `<dir>` directories.
    public init(_ option: OptionSpec) {
        if option.isFlag {
            self = .flag
        } else if let choices = option.choices {
            self = .words(choices)
        } else if let value = option.valueName, value.split(separator: "|").contains("file") {
            self = .files
        } else if option.valueName == "dir" {
            self = .directories
        } else {
            self = .free
        }
    }

    /// A positional argument: its choices, or files (inputs are files or '-').
    public init(_ argument: ArgumentSpec) {
        self = argument.choices.map { .words($0) } ?? .files
    }
}
