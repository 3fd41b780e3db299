import JSON

/// `rewrite:FIELD=VALUE [event=NAME] [kind=KIND] [channel=NAME] [dir=c2s|s2c]`: set a JSON field in
/// matching messages. FIELD is a dotted path from the envelope (`data.socket_id`,
/// `data.activity_timeout`, `data`); a `data` that is a JSON string holding an object (as
/// Pusher sends it) is decoded, changed and encoded back. VALUE is JSON when it reads as
/// JSON (`120`, `true`, `null`, `{"a":1}`, `"text"`), else a string. Compressed messages
/// and messages without the path's parent are relayed as they are.
public struct Rewrite: Fault {
    public static let kind = "rewrite"
    public static let summary = "set a JSON field (dotted path) in matching messages [event=NAME] [kind=KIND] [channel=NAME] [dir=c2s|s2c]"
    public static let example: String? = "data.socket_id=0.0"
    public static let parameters: Set<String> = MessageMatch.parameters

    public let path: [String]
    public let value: JSONValue
    let match: MessageMatch
    var active = false

    public init(_ rule: FaultRule) throws(FaultRuleError) {
        let text = try rule.requiredArgument("FIELD=VALUE")
        guard let equals = text.firstIndex(of: "="), equals != text.startIndex else {
            throw rule.argumentError("rewrite needs FIELD=VALUE, as in rewrite:data.socket_id=0.0")
        }
        let field = String(text[..<equals])
        let raw = String(text[text.index(after: equals)...])
        path = field.split(separator: ".", omittingEmptySubsequences: false).map(String.init)
        guard !path.contains(where: \.isEmpty), path.count <= 16 else {
            throw rule.argumentError("bad field path '\(field)': names joined by dots, as in data.socket_id")
        }
        value = (try? JSONParser.parse(raw)) ?? .string(raw)
        match = try MessageMatch(rule)
    }

    public mutating func apply(_ event: FaultEvent, context: inout FaultContext) -> FaultVerdict {
        switch event {
        case .armed:
            active = true
            return FaultVerdict(report: "rewriting \(path.joined(separator: ".")) in \(match.description)")
        case .frame(let frame) where active && frame.opcode == .text && match.matches(frame):
            guard !frame.compressed else { return .pass }
            guard frame.payload.count <= Self.maxRewrittenBytes,
                  case .object(let envelope)? = try? JSONParser.parse(frame.payload),
                  let changed = Self.set(value, at: path[...], in: envelope) else { return .pass }
            var out: [UInt8] = []
            JSONWriter.write(.object(changed), into: &out)
            return FaultVerdict(frame: .rewrite(out))
        default:
            return .pass
        }
    }

    /// Larger messages are relayed as they are (events are small; the relay decodes no larger).
    static let maxRewrittenBytes = 64 * 1024

    /// `object` with `path` set to `value`; nil when a parent on the path is missing or not an
    /// object. A member that is a string holding a JSON object is descended into and re-encoded.
    static func set(_ value: JSONValue, at path: ArraySlice<String>, in object: JSONObject) -> JSONObject? {
        guard let key = path.first else { return nil }
        var object = object
        if path.count == 1 {
            object[key] = value
            return object
        }
        switch object[key] {
        case .object(let inner)?:
            guard let changed = set(value, at: path.dropFirst(), in: inner) else { return nil }
            object[key] = .object(changed)
        case .string(let text)?:
            guard case .object(let inner)? = try? JSONParser.parse(text),
                  let changed = set(value, at: path.dropFirst(), in: inner) else { return nil }
            object[key] = .string(JSONWriter.serialize(.object(changed)))
        default:
            return nil
        }
        return object
    }
}
