import Capture
import JSON
import Vocabulary

/// One fault rule in the one-line syntax shared by `--fault`, fault plans and the control API:
///
///     KIND[:ARGUMENT][,KEY=VALUE]...
///     close:4009,after=30s,reason=terminated
///     stall-pongs,conn=2,after=5s
///     inject:{"event":"bird:error","data":{"code":4009}},to=client
///
/// Commas inside `{}`, `[]` or double quotes do not split, so JSON arguments need no
/// escaping; a value may be double-quoted (JSON string rules) to hold a comma.
/// Parsing checks everything (kind, argument, every key and value), so a rule that parses
/// can be armed: nothing starts half-configured.
public struct FaultRule: Sendable, Hashable, CustomStringConvertible {
    /// One `key=value` part, with the place of its value for error messages.
    public struct Option: Sendable, Hashable {
        public var key: String
        public var value: String
        /// Offset of the key in the rule text.
        public var column: Int
        /// Offset and length of the value as written (quotes included).
        public var valueColumn: Int
        public var valueLength: Int
    }

    /// The rule exactly as written.
    public var text: String
    /// "close", "stall-pongs", ...
    public var kind: String
    /// What follows `kind:`, if anything ("4009", "500ms", a JSON text).
    public var argument: String?
    public var argumentColumn: Int
    /// The kind's own options (`reason=`, `to=`, `dir=`, `for=`, `jitter=`), in order.
    public var options: [Option]
    /// When and where the rule acts (`after=`, `at=`, `on=`, `frames=`, `conn=`, ...).
    public var trigger: FaultTrigger

    public var description: String { text }

    /// Parses and fully checks a rule against the registry's kinds.
    public static func parse(_ text: String) throws(FaultRuleError) -> FaultRule {
        let trimmed = text.trimmingWhitespace()
        guard !trimmed.isEmpty else { throw FaultRuleError("empty fault rule", rule: text) }
        let parts = splitTopLevel(trimmed)
        let head = parts[0]
        var kind = head.text
        var argument: String?
        var argumentColumn = head.column + head.text.count
        if let colon = head.text.firstIndex(of: ":") {
            kind = String(head.text[..<colon])
            argument = String(head.text[head.text.index(after: colon)...])
            argumentColumn = head.column + kind.count + 1
        }
        guard let type = FaultRegistry.kind(named: kind) else {
            throw FaultRuleError("unknown fault kind '\(kind)'\(FaultSuggestion.hint(kind, FaultRegistry.names)) (known kinds: \(FaultRegistry.names.joined(separator: ", ")))",
                                 rule: trimmed, column: head.column, length: max(1, kind.count))
        }
        var options: [Option] = []
        var trigger = FaultTrigger()
        for part in parts.dropFirst() {
            guard let equals = part.text.firstIndex(of: "="), equals != part.text.startIndex else {
                throw FaultRuleError("expected KEY=VALUE, found '\(part.text)'", rule: trimmed,
                                     column: part.column, length: max(1, part.text.count))
            }
            let key = String(part.text[..<equals])
            let raw = String(part.text[part.text.index(after: equals)...])
            let valueColumn = part.column + key.count + 1
            let value = try unquote(raw, rule: trimmed, column: valueColumn)
            let option = Option(key: key, value: value, column: part.column, valueColumn: valueColumn,
                                valueLength: max(1, raw.count))
            if options.contains(where: { $0.key == key }) || trigger.has(key) {
                throw FaultRuleError("'\(key)' given twice", rule: trimmed, column: part.column, length: key.count)
            }
            if FaultTrigger.keys.contains(key) {
                try trigger.set(option, rule: trimmed)
            } else if type.parameters.contains(key) {
                options.append(option)
            } else {
                let allowed = (type.parameters.sorted() + FaultTrigger.keys).joined(separator: ", ")
                let hint = FaultSuggestion.hint(key, type.parameters.sorted() + FaultTrigger.keys) { "'\($0)='" }
                throw FaultRuleError("unknown option '\(key)' for \(kind)\(hint) (allowed: \(allowed))",
                                     rule: trimmed, column: part.column, length: key.count)
            }
        }
        let rule = FaultRule(text: trimmed, kind: kind, argument: argument, argumentColumn: argumentColumn,
                             options: options, trigger: trigger)
        if type.actsAtUpgrade, let bad = trigger.frameConditionKey {
            let option = trigger.option(bad)
            throw FaultRuleError("\(kind) acts at the upgrade, before any frame: '\(bad)' cannot apply",
                                 rule: trimmed, column: option?.column ?? 0, length: bad.count)
        }
        _ = try type.init(rule)   // the kind checks its argument and options
        return rule
    }

    /// The kind's fault, armed from this rule.
    public func makeFault() throws(FaultRuleError) -> any Fault {
        guard let type = FaultRegistry.kind(named: kind) else {
            throw FaultRuleError("unknown fault kind '\(kind)'", rule: text)
        }
        return try type.init(self)
    }

    // MARK: - Helpers for the kinds' initialisers

    /// The value of a kind option, if given.
    public func option(_ key: String) -> Option? { options.first { $0.key == key } }

    /// An error pointing at the argument (or at the end of the kind when it is missing).
    public func argumentError(_ message: String) -> FaultRuleError {
        FaultRuleError(message, rule: text, column: argumentColumn, length: max(1, argument?.count ?? 1))
    }

    /// An error pointing at an option's value.
    public func error(_ message: String, at option: Option) -> FaultRuleError {
        FaultRuleError(message, rule: text, column: option.valueColumn, length: option.valueLength)
    }

    /// The argument, required.
    public func requiredArgument(_ what: String) throws(FaultRuleError) -> String {
        guard let argument, !argument.isEmpty else {
            throw argumentError("\(kind) needs \(what), as in \(kind):\(FaultRegistry.kind(named: kind)?.example ?? "...")")
        }
        return argument
    }

    /// The rule's argument read as a duration (`latency:50ms`, `timeout:5s`), or an error
    /// pointing at it.
    public func durationArgument() throws(FaultRuleError) -> Micros {
        let text = try requiredArgument("a duration")
        switch FaultDuration.parse(text) {
        case .success(let micros): return micros
        case .failure(let failure): throw argumentError(failure.message)
        }
    }

    /// A duration option (`for=`, `jitter=`).
    public func durationOption(_ key: String) throws(FaultRuleError) -> Micros? {
        guard let option = option(key) else { return nil }
        switch FaultDuration.parse(option.value) {
        case .success(let micros): return micros
        case .failure(let failure): throw error(failure.message, at: option)
        }
    }

    /// A side option (`to=client|server`).
    public func sideOption(_ key: String, default side: Side) throws(FaultRuleError) -> Side {
        guard let option = option(key) else { return side }
        guard let side = Side(rawValue: option.value) else {
            throw error("\(key) must be client or server, not '\(option.value)'", at: option)
        }
        return side
    }

    /// A direction option (`dir=c2s|s2c`): the sides whose frames are affected, by sender.
    public func directionOption(_ key: String) throws(FaultRuleError) -> Set<Side> {
        guard let option = option(key) else { return [.client, .server] }
        switch option.value {
        case "c2s": return [.client]
        case "s2c": return [.server]
        case "both": return [.client, .server]
        default: throw error("\(key) must be c2s, s2c or both, not '\(option.value)'", at: option)
        }
    }

    // MARK: - Lexing

    struct Part { var text: String; var column: Int }

    /// Splits at commas outside quotes and brackets; trims blanks around parts.
    static func splitTopLevel(_ text: String) -> [Part] {
        var parts: [Part] = []
        var current = ""
        var start = 0
        var depth = 0
        var inString = false
        var escaped = false
        for (offset, character) in text.enumerated() {
            if inString {
                if escaped { escaped = false } else if character == "\\" { escaped = true } else if character == "\"" { inString = false }
            } else if character == "\"" {
                inString = true
            } else if character == "{" || character == "[" {
                depth += 1
            } else if character == "}" || character == "]" {
                depth = max(0, depth - 1)
            } else if character == ",", depth == 0 {
                parts.append(trimmedPart(current, column: start))
                current = ""
                start = offset + 1
                continue
            }
            current.append(character)
        }
        parts.append(trimmedPart(current, column: start))
        return parts
    }

    static func trimmedPart(_ text: String, column: Int) -> Part {
        let leading = text.prefix { $0 == " " || $0 == "\t" }.count
        return Part(text: text.trimmingWhitespace(), column: column + leading)
    }

    /// `"a, b"` -> `a, b` (JSON string rules); anything else as is.
    static func unquote(_ raw: String, rule: String, column: Int) throws(FaultRuleError) -> String {
        guard raw.hasPrefix("\"") else { return raw }
        guard case .string(let value)? = try? JSONParser.parse(raw) else {
            throw FaultRuleError("bad quoted value \(raw)", rule: rule, column: column, length: raw.count)
        }
        return value
    }
}

extension String {
    func trimmingWhitespace() -> String {
        var slice = Substring(self)
        while let first = slice.first, first.isWhitespace { slice.removeFirst() }
        while let last = slice.last, last.isWhitespace { slice.removeLast() }
        return String(slice)
    }
}
