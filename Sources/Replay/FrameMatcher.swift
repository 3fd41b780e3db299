import Capture
import JSON
import WebSocket

/// Compares a frame seen live with the recorded one, modulo the `MatchRules`. Pure; keeps
/// the mapping of mapped fields (recorded value -> live value) learnt so far.
///
/// Frames are of the same *kind* when opcode and (for JSON text) event name agree; two
/// frames of the same kind that differ are "different", frames of different kinds are
/// unrelated (the alignment then looks further for the recorded one).
public struct FrameMatcher: Sendable {
    public let rules: MatchRules
    /// Recorded value -> live value of mapped fields, learnt on first comparison.
    public private(set) var mapping: [String: String] = [:]
    /// The live value last seen for each mapped field name ("socket_id" -> "999.1").
    public private(set) var liveFields: [String: String] = [:]

    public init(rules: MatchRules = MatchRules()) { self.rules = rules }

    public enum Verdict: Sendable, Hashable {
        /// Equal modulo the rules.
        case same
        /// Same kind, different content: each entry names a path and both values.
        case different([String])
        /// Different opcode or event: not the recorded frame at all.
        case unrelated
    }

    /// A comparison and the mappings it would learn; `commit` keeps them.
    public struct Comparison: Sendable, Hashable {
        public var verdict: Verdict
        public var learned: [String: String]
        /// Live values of mapped fields by field name.
        public var fields: [String: String] = [:]
    }

    /// Compares without changing the matcher.
    public func compare(recorded: FrameRecord, observed: Frame) -> Comparison {
        compare(recordedOpcode: recorded.opcode, recorded.payload, observedOpcode: observed.opcode, observed.payload)
    }

    public func compare(recordedOpcode: Opcode, _ recorded: [UInt8], observedOpcode: Opcode, _ observed: [UInt8]) -> Comparison {
        guard recordedOpcode == observedOpcode else { return Comparison(verdict: .unrelated, learned: [:]) }
        if recordedOpcode == .close {
            let want = ClosePayload.lenient(recorded), got = ClosePayload.lenient(observed)
            if want == got { return Comparison(verdict: .same, learned: [:]) }
            return Comparison(verdict: .different(["close: \(Self.describeClose(got)) (recorded \(Self.describeClose(want)))"]), learned: [:])
        }
        if recordedOpcode == .text, let want = Self.json(recorded), let got = Self.json(observed) {
            guard want["event"] == got["event"] else { return Comparison(verdict: .unrelated, learned: [:]) }
            var walk = Walk(rules: rules, mapping: mapping)
            walk.compare(want, got, path: "")
            return Comparison(verdict: walk.differences.isEmpty ? .same : .different(walk.differences), learned: walk.learned,
                              fields: walk.fields)
        }
        if recorded == observed { return Comparison(verdict: .same, learned: [:]) }
        return Comparison(verdict: .different(["payload: \(Self.preview(observed)) (recorded \(Self.preview(recorded)))"]), learned: [:])
    }

    /// Keeps what a chosen comparison learnt.
    public mutating func commit(_ comparison: Comparison) {
        for (recorded, live) in comparison.learned where mapping[recorded] == nil { mapping[recorded] = live }
        liveFields.merge(comparison.fields) { $1 }
    }

    /// A recorded payload with the learnt live values of mapped fields written in, for a
    /// replay that sends recorded frames to a live peer. Unchanged bytes when nothing maps.
    public func rewrite(_ payload: [UInt8]) -> [UInt8] {
        guard !mapping.isEmpty, let value = Self.json(payload) else { return payload }
        var changed = false
        let rewritten = rewrite(value, changed: &changed)
        guard changed else { return payload }
        var out: [UInt8] = []
        JSONWriter.write(rewritten, into: &out)
        return out
    }

    private func rewrite(_ value: JSONValue, key: String? = nil, changed: inout Bool) -> JSONValue {
        switch value {
        case .string(let text):
            if let key, rules.mapped.contains(key), let live = mapping[text] {
                changed = true
                return .string(live)
            }
            if let nested = Self.nestedJSON(text) {
                var inner = false
                let rewritten = rewrite(nested, changed: &inner)
                if inner {
                    changed = true
                    return .string(JSONWriter.serialize(rewritten))
                }
            }
            return value
        case .array(let items):
            return .array(items.map { rewrite($0, changed: &changed) })
        case .object(let object):
            return .object(JSONObject(object.members.map { ($0.key, rewrite($0.value, key: $0.key, changed: &changed)) }))
        default:
            return value
        }
    }

    // MARK: Helpers

    /// The payload as a JSON object or array, nil for anything else.
    static func json(_ payload: [UInt8]) -> JSONValue? {
        guard let first = payload.first(where: { $0 != 0x20 && $0 != 0x0A && $0 != 0x0D && $0 != 0x09 }),
              first == UInt8(ascii: "{") || first == UInt8(ascii: "[") else { return nil }
        return try? JSONParser.parse(payload)
    }

    /// A string that holds a JSON object or array (Pusher's `data` convention).
    static func nestedJSON(_ text: String) -> JSONValue? {
        guard let first = text.utf8.first, first == UInt8(ascii: "{") || first == UInt8(ascii: "[") else { return nil }
        return try? JSONParser.parse(text)
    }

    static func describeClose(_ close: ClosePayload) -> String {
        guard let code = close.code else { return "no code" }
        return close.reason.isEmpty ? "\(code)" : "\(code) \"\(close.reason)\""
    }

    static func preview(_ payload: [UInt8], limit: Int = 80) -> String {
        guard let text = String(validating: payload, as: UTF8.self) else { return "\(payload.count) binary bytes" }
        return text.count > limit ? "\"\(text.prefix(limit))...\"" : "\"\(text)\""
    }
}

/// One structural comparison: walks recorded and observed JSON side by side.
private struct Walk {
    let rules: MatchRules
    let mapping: [String: String]
    var learned: [String: String] = [:]
    var fields: [String: String] = [:]
    var differences: [String] = []

    init(rules: MatchRules, mapping: [String: String]) {
        self.rules = rules
        self.mapping = mapping
    }

    mutating func compare(_ want: JSONValue, _ got: JSONValue, path: String, key: String? = nil) {
        if let key, rules.mapped.contains(key), case .string(let recorded) = want, case .string(let live) = got {
            fields[key] = live
            if let known = mapping[recorded] ?? learned[recorded] {
                if known != live { note(path, got, "\(show(want)) -> \(known)") }
            } else {
                learned[recorded] = live
            }
            return
        }
        switch (want, got) {
        case (.object(let a), .object(let b)):
            for (name, value) in a.members where !rules.ignored.contains(name) {
                let sub = path.isEmpty ? name : "\(path).\(name)"
                guard let other = b[name] else {
                    differences.append("\(sub): missing (recorded \(show(value)))")
                    continue
                }
                compare(value, other, path: sub, key: name)
            }
            for (name, value) in b.members where !rules.ignored.contains(name) && a[name] == nil {
                differences.append("\(path.isEmpty ? name : "\(path).\(name)"): \(show(value)) (not recorded)")
            }
        case (.array(let a), .array(let b)):
            for (i, pair) in zip(a, b).enumerated() { compare(pair.0, pair.1, path: "\(path)[\(i)]") }
            if a.count != b.count { differences.append("\(path): \(b.count) items (recorded \(a.count))") }
        case (.string(let a), .string(let b)):
            if a == b { return }
            if let x = FrameMatcher.nestedJSON(a), let y = FrameMatcher.nestedJSON(b) {
                compare(x, y, path: path)
                return
            }
            note(path, got, show(want))
        case (.int, .double), (.double, .int), (.double, .double):
            if want.doubleValue != got.doubleValue { note(path, got, show(want)) }
        default:
            if want != got { note(path, got, show(want)) }
        }
    }

    private mutating func note(_ path: String, _ got: JSONValue, _ recorded: String) {
        differences.append("\(path.isEmpty ? "(message)" : path): \(show(got)) (recorded \(recorded))")
    }

    private func show(_ value: JSONValue) -> String {
        let text = JSONWriter.serialize(value)
        return text.count > 60 ? String(text.prefix(60)) + "..." : text
    }
}
