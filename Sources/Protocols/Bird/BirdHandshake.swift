import JSON
import Protocols

/// Bird/Pusher's handshake (`P:connection_established`, whose `data` is a JSON string
/// holding an object) as the handshake faults rewrite it, under whatever prefix it came.
enum BirdHandshake {
    /// Frames larger than this are not rewritten (events are small).
    static let maxInspectedBytes = 64 * 1024

    /// The handshake `payload` with `change` made; nil when it is no handshake envelope or
    /// its `data` holds no object. Keeps `data` double-encoded as it came.
    static func rewrite(_ payload: [UInt8], _ change: HandshakeChange) -> HandshakeRewrite? {
        var previous: String?
        guard let rewritten = rewriteData(payload, { data in
            switch change {
            case .removeSocketID:
                previous = data["socket_id"].map { $0.stringValue ?? JSONWriter.serialize($0) }
                data["socket_id"] = nil
            case .activityTimeout(let seconds):
                previous = data["activity_timeout"].map { JSONWriter.serialize($0) }
                data["activity_timeout"] = .int(Int64(seconds))
            }
        }) else { return nil }
        return HandshakeRewrite(payload: rewritten, previous: previous)
    }

    /// Rewrites the envelope's data object with `change`; nil if there is none.
    private static func rewriteData(_ payload: [UInt8], _ change: (inout JSONObject) -> Void) -> [UInt8]? {
        guard payload.count <= maxInspectedBytes, case .object(var envelope)? = try? JSONParser.parse(payload)
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
