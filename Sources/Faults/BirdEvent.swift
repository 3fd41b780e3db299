import JSON

/// The little of the Bird/Pusher protocol that faults need: an event's name, and the
/// handshake (`P:connection_established`, whose `data` is a JSON string holding an object).
/// The full decoder lives in Realtime; this stays here so faults work without it.
public enum BirdEvent {
    public static let defaultPrefixes = ["bird", "pusher"]
    /// Frames larger than this are not inspected for event names (events are small).
    static let maxInspectedBytes = 64 * 1024

    /// The `event` member of a JSON object text, or nil.
    public static func name(of payload: [UInt8]) -> String? {
        guard payload.count <= maxInspectedBytes, payload.first == UInt8(ascii: "{"),
              let value = try? JSONParser.parse(payload) else { return nil }
        return value["event"]?.stringValue
    }

    /// Whether `event` is `PREFIX:suffix` for one of `prefixes`.
    public static func matches(_ event: String?, suffix: String, prefixes: [String]) -> Bool {
        guard let event else { return false }
        return prefixes.contains { event == $0 + ":" + suffix }
    }

    /// Rewrites the handshake's data object with `change`; nil if `payload` is not a
    /// handshake. Keeps `data` double-encoded as it came.
    public static func rewriteHandshake(_ payload: [UInt8], prefixes: [String],
                                        _ change: (inout JSONObject) -> Void) -> [UInt8]? {
        guard payload.count <= maxInspectedBytes, case .object(var envelope)? = try? JSONParser.parse(payload),
              matches(envelope["event"]?.stringValue, suffix: "connection_established", prefixes: prefixes)
        else { return nil }
        switch envelope["data"] {
        case .string(let text)?:
            guard case .object(var data)? = try? JSONParser.parse(text) else { return nil }
            change(&data)
            envelope["data"] = .string(JSONWriter.serialize(.object(data)))
        case .object(var data)?:
            change(&data)
            envelope["data"] = .object(data)
        default:
            return nil
        }
        var out: [UInt8] = []
        JSONWriter.write(.object(envelope), into: &out)
        return out
    }
}
