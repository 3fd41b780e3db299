/// The declaration of one command: what `--help` shows and what the parser accepts.
/// Modelled on swift-argument-parser's layout (OVERVIEW, USAGE, ARGUMENTS, OPTIONS,
/// SUBCOMMANDS), which is not available on these machines.
public struct CommandSpec: Sendable {
    public var name: String
    public var abstract: String
    public var discussion: String
    public var arguments: [ArgumentSpec]
    public var options: [OptionSpec]
    public var subcommands: [CommandSpec]
    /// Help of its own for a word the command takes as its first argument and parses itself
    /// (`ctl intercept`, whose subcommands have their own arguments and options): shown by
    /// `help COMMAND TOPIC` and `COMMAND TOPIC --help`. Unlike `subcommands`, not commands
    /// the tool dispatches to.
    public var topics: [CommandSpec]
    /// A usage line to print instead of the generated one, for commands with alternatives.
    public var usage: String?

    public init(name: String, abstract: String, discussion: String = "", usage: String? = nil,
                arguments: [ArgumentSpec] = [], options: [OptionSpec] = [], subcommands: [CommandSpec] = [], topics: [CommandSpec] = []) {
        self.name = name
        self.abstract = abstract
        self.discussion = discussion
        self.usage = usage
        self.arguments = arguments
        self.options = options
        self.subcommands = subcommands
        self.topics = topics
    }
}

/// A positional argument.
public struct ArgumentSpec: Sendable {
    public var name: String
    public var help: String
    public var optional: Bool
    /// Takes every remaining positional argument (at least one unless optional).
    public var variadic: Bool
    /// The words it may be, for help and shell completion (nil: a file or free text).
    public var choices: [String]?

    public init(_ name: String, help: String, optional: Bool = false, variadic: Bool = false, choices: [String]? = nil) {
        self.name = name
        self.help = help
        self.optional = optional
        self.variadic = variadic
        self.choices = choices
    }
}

/// A named option (`--listen HOST:PORT`) or flag (`--live`).
public struct OptionSpec: Sendable {
    /// Long name without dashes: "listen".
    public var name: String
    /// Optional one-letter alias without the dash: "v".
    public var short: Character?
    /// Nil for a flag; otherwise the placeholder shown in help: "host:port".
    public var valueName: String?
    public var help: String
    public var defaultValue: String?
    public var repeatable: Bool
    /// Allowed values, checked by the parser and listed in help.
    public var choices: [String]?
    /// The command refuses to run without it: the parser says so, and help shows it without
    /// brackets in USAGE and marked "(required)". An option needed only in some modes
    /// (`proxy --upstream`, not with `--forward`) is not required; its help says when.
    public var required: Bool

    public init(_ name: String, short: Character? = nil, value valueName: String? = nil, help: String,
                default defaultValue: String? = nil, repeatable: Bool = false, choices: [String]? = nil,
                required: Bool = false) {
        self.name = name
        self.short = short
        self.valueName = valueName
        self.help = help
        self.defaultValue = defaultValue
        self.repeatable = repeatable
        self.choices = choices
        self.required = required
    }

    public var isFlag: Bool { valueName == nil }

    /// "-v, --verbose" or "--listen <host:port>".
    var label: String {
        var label = short.map { "-\($0), " } ?? ""
        label += "--\(name)"
        if let valueName { label += " <\(valueName)>" }
        return label
    }
}

/// Help that a command's file does not carry: its examples, kept in one table by the tool
/// (`CommandLineTool.extras`, keyed by command path such as "faultline sim client"), so
/// every command's help ends with an EXAMPLES section. (Which options are required is the
/// options' own `required`, so help and parser cannot disagree.)
public struct HelpExtras: Sendable {
    public var examples: [String]
    public init(examples: [String]) {
        self.examples = examples
    }
}
