/// A rule that cannot be used, with the place of the bad part so the message can point at it:
///
///     faults.plan:3:7: close code 99999 outside 1000-4999
///       close:99999,after=5s
///             ^^^^^
public struct FaultRuleError: Error, Sendable, Hashable, CustomStringConvertible {
    /// What was wrong, without place: "close code 99999 outside 1000-4999".
    public var message: String
    /// The whole rule as written.
    public var rule: String
    /// Offset of the bad part in `rule`, in characters, from 0.
    public var column: Int
    /// Length of the bad part (at least 1 for the caret line).
    public var length: Int
    /// "file:line" when the rule came from a fault plan; nil for `--fault` and the API.
    public var location: String?

    public init(_ message: String, rule: String, column: Int = 0, length: Int? = nil, location: String? = nil) {
        self.message = message
        self.rule = rule
        self.column = max(0, min(column, rule.count))
        self.length = max(1, length ?? (rule.count - self.column))
        self.location = location
    }

    /// One line: "faults.plan:3:7: close code 99999 outside 1000-4999" or
    /// "fault rule 'close:99999' (column 7): close code ...".
    public var summary: String {
        if let location { return "\(location):\(column + 1): \(message)" }
        return "fault rule '\(rule)' (column \(column + 1)): \(message)"
    }

    /// The summary, then the rule and a caret line under the bad part.
    public var description: String {
        summary + "\n  " + rule + "\n  " + String(repeating: " ", count: column)
            + String(repeating: "^", count: max(1, min(length, rule.count - column)))
    }
}
