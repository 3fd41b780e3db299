import JSON

/// Bird/Pusher's handshake (`P:connection_established`, whose `data` is a JSON string
/// holding an object) as the handshake faults rewrite it, and event-name matching under
/// any of several prefixes (faults and the live view accept both `bird` and `pusher`).
public enum BirdHandshake {
    public static let defaultPrefixes = ["bird", "pusher"]
    /// Frames larger than this are not rewritten (events are small).
    public static let maxInspectedBytes = 64 * 1024

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
