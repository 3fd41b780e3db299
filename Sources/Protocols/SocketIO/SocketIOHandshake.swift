import JSON
import Protocols

/// engine.io's open packet, `0{"sid":"..","upgrades":[],"pingInterval":25000,
/// "pingTimeout":20000,"maxPayload":1000000}`: the handshake event, and its rewrite for the
/// handshake faults. Its times are milliseconds.
enum SocketIOHandshake {
    /// Open packets larger than this are not read (a real one is about 100 bytes).
    static let maxOpenPacket = 4 * 1024
    /// The largest ping interval or timeout believed, in milliseconds (a day); a larger one
    /// is clamped, so a hostile number never overflows a deadline.
    static let maxMilliseconds = 86_400_000.0

    /// The open's event: kind connection established, its `sid` as `socket_id` (the
    /// member the lifecycle rules read) beside the packet's own members, and its ping
    /// schedule as the announced liveness. An open that is no object gives no event.
    static func event(_ body: ArraySlice<UInt8>) -> RealtimeEvent? {
        guard body.count <= maxOpenPacket, case .object(var object)? = try? JSONParser.parse(body) else { return nil }
        let raw = JSONValue.object(object)
        if let sid = object["sid"]?.stringValue { object["socket_id"] = .string(sid) }
        var event = RealtimeEvent(name: "open", channel: nil, data: .object(object), rawData: raw, kind: .connectionEstablished)
        if let interval = milliseconds(object["pingInterval"]), let timeout = milliseconds(object["pingTimeout"]) {
            event.liveness = AnnouncedLiveness(pingInterval: interval / 1000, pingTimeout: timeout / 1000)
        }
        return event
    }

    /// A JSON number of milliseconds, clamped to 0...`maxMilliseconds`; nil for no number.
    static func milliseconds(_ value: JSONValue?) -> Double? {
        guard let number = value?.doubleValue, number.isFinite else { return nil }
        return min(max(number, 0), maxMilliseconds)
    }

    /// The open packet with `change` made: the `sid` removed (`strip-socket-id`), or the
    /// ping interval set to the given seconds (`activity-timeout`: engine.io's nearest
    /// field, the silence after which the client hears from the server). Nil when the
    /// payload is no open packet with an object.
    static func rewrite(_ payload: [UInt8], _ change: HandshakeChange) -> HandshakeRewrite? {
        guard payload.count <= maxOpenPacket + 1, payload.first == UInt8(ascii: "0"),
              case .object(var object)? = try? JSONParser.parse(payload[1...]) else { return nil }
        let previous: String?
        switch change {
        case .removeSocketID:
            previous = object["sid"].map { $0.stringValue ?? JSONWriter.serialize($0) }
            object["sid"] = nil
        case .activityTimeout(let seconds):
            previous = object["pingInterval"].map { JSONWriter.serialize($0) }
            let clamped = min(max(Int64(seconds), 0), Int64(maxMilliseconds) / 1000)
            object["pingInterval"] = .int(clamped * 1000)
        }
        var out: [UInt8] = [UInt8(ascii: "0")]
        JSONWriter.write(.object(object), into: &out)
        return HandshakeRewrite(payload: out, previous: previous)
    }
}
