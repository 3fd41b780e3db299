/// A fault plan file: one rule a line in the `--fault` syntax, `#` starts a comment (to the
/// end of the line, outside JSON strings), blank lines are ignored. Every line is checked;
/// the first bad one fails the whole plan with "file:line:column: message".
public struct FaultPlan: Sendable, Hashable {
    public struct Entry: Sendable, Hashable {
        public var rule: FaultRule
        /// 1-based line number in the file.
        public var line: Int
    }

    public var entries: [Entry]
    public var rules: [FaultRule] { entries.map(\.rule) }

    /// Parses the text of a plan; `name` is the file name used in messages.
    public static func parse(_ text: String, name: String) throws(FaultRuleError) -> FaultPlan {
        var entries: [Entry] = []
        var lineNumber = 0
        for rawLine in text.split(separator: "\n", omittingEmptySubsequences: false) {
            lineNumber += 1
            var line = String(rawLine)
            if line.hasSuffix("\r") { line.removeLast() }
            let content = stripComment(line)
            let leading = content.prefix { $0 == " " || $0 == "\t" }.count
            let trimmed = content.trimmingWhitespace()
            guard !trimmed.isEmpty else { continue }
            do {
                entries.append(Entry(rule: try FaultRule.parse(trimmed), line: lineNumber))
            } catch {
                var located = error
                located.location = "\(name):\(lineNumber)"
                located.column += leading
                located.rule = line
                throw located
            }
        }
        return FaultPlan(entries: entries)
    }

    /// The line up to a `#` that is not inside a double-quoted string.
    static func stripComment(_ line: String) -> String {
        var inString = false
        var escaped = false
        var result = ""
        for character in line {
            if inString {
                if escaped { escaped = false } else if character == "\\" { escaped = true } else if character == "\"" { inString = false }
            } else if character == "\"" {
                inString = true
            } else if character == "#" {
                break
            }
            result.append(character)
        }
        return result
    }
}
