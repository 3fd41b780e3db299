/// Renders `--help` in swift-argument-parser's layout.
public enum HelpFormatter {
    static let labelWidth = 26

    public static func help(for spec: CommandSpec, commandPath: String, root: String, extras: HelpExtras? = nil) -> String {
        var out = "OVERVIEW: \(spec.abstract)\n"
        if !spec.discussion.isEmpty { out += "\n\(spec.discussion)\n" }
        out += "\nUSAGE: \(spec.usage ?? usage(for: spec, commandPath: commandPath))\n"
        if !spec.arguments.isEmpty {
            out += "\nARGUMENTS:\n"
            for argument in spec.arguments {
                let values = argument.choices.map { " (values: \($0.joined(separator: ", ")))" } ?? ""
                out += row("<\(argument.name)>" + (argument.variadic ? " ..." : ""), argument.help + values)
            }
        }
        out += "\nOPTIONS:\n"
        for option in spec.options {
            var help = option.help
            if let choices = option.choices { help += " (values: \(choices.joined(separator: ", ")))" }
            if let value = option.defaultValue { help += " (default: \(value))" }
            if option.required { help += " (required)" }
            out += row(option.label, help)
        }
        if commandPath == root { out += row("--version", "Show the version.") }
        out += row("-h, --help", "Show help information.")
        if !spec.subcommands.isEmpty {
            out += "\nSUBCOMMANDS:\n"
            for sub in spec.subcommands { out += row(sub.name, sub.abstract) }
            out += "\n  See '\(root) help <subcommand>' for detailed help.\n"
        }
        if let examples = extras?.examples, !examples.isEmpty, !spec.discussion.contains("EXAMPLES:") {
            out += "\nEXAMPLES:\n" + examples.map { "  \($0)\n" }.joined()
        }
        return out
    }

    static func usage(for spec: CommandSpec, commandPath: String) -> String {
        if !spec.subcommands.isEmpty { return "\(commandPath) <subcommand>" }
        var parts = [commandPath]
        for argument in spec.arguments {
            let name = "<\(argument.name)>" + (argument.variadic ? " ..." : "")
            parts.append(argument.optional ? "[\(name)]" : name)
        }
        for option in spec.options {
            var text = "--\(option.name)"
            if let valueName = option.valueName { text += " <\(valueName)>" }
            if option.repeatable { text += " ..." }
            parts.append(option.required ? text : "[\(text)]")
        }
        return parts.joined(separator: " ")
    }

    /// One "  label   help" row, wrapping the help text under itself.
    static func row(_ label: String, _ help: String) -> String {
        let indent = String(repeating: " ", count: labelWidth + 2)
        var lines: [String] = []
        var current = ""
        for word in help.split(separator: " ", omittingEmptySubsequences: false) {
            if !current.isEmpty, current.count + word.count + 1 > 80 - labelWidth - 2 {
                lines.append(current)
                current = String(word)
            } else {
                current += current.isEmpty ? String(word) : " " + word
            }
        }
        lines.append(current)
        var out = "  " + label
        if label.count >= labelWidth - 1 {
            out += "\n" + indent
        } else {
            out += String(repeating: " ", count: labelWidth - label.count)
        }
        out += lines.joined(separator: "\n" + indent) + "\n"
        return out
    }
}
