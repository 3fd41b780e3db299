/// The manual page (roff, `man 7 man` macros) generated from the same declarations as
/// `--help`: NAME, SYNOPSIS, DESCRIPTION, one COMMANDS subsection per command (overview,
/// usage, discussion, options), then any extra sections. `faultline help --man` prints it;
/// the Debian package installs it as man1/faultline.1.
public enum ManPage {
    /// A section beyond the generated ones: a title ("ENVIRONMENT") and paragraphs.
    public struct Section: Sendable {
        public var title: String
        public var text: String
        public init(title: String, text: String) {
            self.title = title
            self.text = text
        }
    }

    public static func render(root: CommandSpec, version: String, sections: [Section] = []) -> String {
        let name = root.name
        var out = ".TH \(name.uppercased()) 1 \"\" \(quoted(version)) \"User Commands\"\n"
        out += ".SH NAME\n\(escape(name)) \\- \(escape(root.abstract))\n"
        out += ".SH SYNOPSIS\n"
        out += ".B \(escape(name))\n.I command\n.RI [ options ]\n.br\n"
        out += ".B \(escape(name)) help\n.RI [ command ]\n.br\n"
        out += ".B \(escape(name)) \\-\\-version\n"
        if !root.discussion.isEmpty { out += ".SH DESCRIPTION\n" + paragraphs(root.discussion) }
        out += ".SH COMMANDS\n"
        for node in CompletionNode.all(under: root) {
            let path = ([name] + node.path).joined(separator: " ")
            out += ".SS \(quoted(path))\n\(escape(node.spec.abstract))\n"
            out += ".PP\nUsage: \(escape(node.spec.usage ?? HelpFormatter.usage(for: node.spec, commandPath: path)))\n"
            if !node.spec.discussion.isEmpty { out += paragraphs(node.spec.discussion) }
            for argument in node.spec.arguments {
                out += ".TP\n.I \(escape(argument.name))\(argument.variadic ? " ..." : "")\n\(escape(argument.help))\n"
            }
            for option in node.spec.options {
                var label = "\\fB" + (option.short.map { "\\-\($0)\\fR, \\fB" } ?? "") + "\\-\\-" + escape(option.name) + "\\fR"
                if let value = option.valueName { label += " \\fI" + escape(value) + "\\fR" }
                var help = option.help
                if let choices = option.choices { help += " (values: \(choices.joined(separator: ", ")))" }
                if let value = option.defaultValue { help += " (default: \(value))" }
                out += ".TP\n\(label)\n\(escape(help))\n"
            }
        }
        for section in sections {
            out += ".SH \(quoted(section.title))\n" + paragraphs(section.text)
        }
        return out
    }

    /// Blank-line-separated paragraphs; one whose lines are indented (a table, an example)
    /// keeps its lines as they are.
    static func paragraphs(_ text: String) -> String {
        var out = ""
        for paragraph in text.split(separator: "\n\n", omittingEmptySubsequences: true) {
            let lines = paragraph.split(separator: "\n", omittingEmptySubsequences: false)
            if lines.contains(where: { $0.first == " " || $0.first == "\t" }) {
                out += ".PP\n.nf\n" + lines.map { escape(String($0)) }.joined(separator: "\n") + "\n.fi\n"
            } else {
                out += ".PP\n" + lines.map { escape(String($0)) }.joined(separator: "\n") + "\n"
            }
        }
        return out
    }

    /// Text for a roff line: backslashes doubled, a dash that starts a word (an option) made
    /// a real minus so it can be copied, and a line that would start with `.` or `'`
    /// (a request) protected with `\&`.
    static func escape(_ text: String) -> String {
        var out = ""
        var previous: Character = " "
        for c in text {
            switch c {
            case "\\": out += "\\e"
            case "-" where previous == " " || previous == "-" || previous == "(" || previous == "'" || previous == "[":
                out += "\\-"
            default: out.append(c)
            }
            previous = c
        }
        if out.first == "." || out.first == "'" { out = "\\&" + out }
        return out
    }

    /// A macro argument in double quotes (a `"` inside written as `""`).
    static func quoted(_ text: String) -> String {
        "\"" + escape(text).replacing("\"", with: "\"\"") + "\""
    }
}
