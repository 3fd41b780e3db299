import JSON
import Protocols

/// Socket.IO v5 over engine.io v4 (websocket transport), as a protocol table entry: each
/// text message is one engine.io packet (`SocketIOPacket`), mapped onto the kinds the
/// engines read. The server's open packet `0{"sid":..,"pingInterval":..,"pingTimeout":..}`
/// is the handshake (its `sid` the socket id, its ping schedule the announced liveness: in
/// engine.io v4 the server pings, `2`, and the client answers, `3`); a namespace connect
/// `40` is a subscribe to the namespace and its answer `40{"sid":..}` the subscription
/// succeeded, `44` its refusal, `41` a namespace disconnect; events `42["name",..]` are
/// client events on the namespace (their name the event's), acks `43` other events matched
/// by their ack id (`ref`). Binary events and acks (`45`/`46`) are recognized by name; their
/// attachments travel as binary messages, which carry no event.
public struct SocketIOProtocol: WireProtocol {
    public static let key = "socketio"
    public static let summary = "Socket.IO v5 over engine.io v4: open, server pings, namespace connects, events and acks"
    public var dialect: String? { nil }

    public init() {}

    /// engine.io's own query parameter `EIO=4` (its protocol version) on the upgrade, on
    /// the default path `/socket.io/` or any other the app chose.
    public static func claim(upgrade: UpgradeEvidence) -> String? {
        guard upgrade.query.contains(where: { $0.name == "EIO" && $0.value == "4" }) else { return nil }
        return upgrade.path.hasSuffix("/socket.io/") || upgrade.path.hasSuffix("/socket.io")
            ? "the upgrade's path /socket.io/?EIO=4 is engine.io v4's URL"
            : "the upgrade's query EIO=4 is engine.io v4's"
    }

    /// An engine.io open packet: `0` and an object with `sid` and `pingInterval`.
    public static func claim(message payload: [UInt8]) -> String? {
        guard payload.first == UInt8(ascii: "0"), payload.count > 1, payload[1] == UInt8(ascii: "{") else { return nil }
        guard case .members(let members) = JSONSkimmer.members(of: payload[1...], named: ["sid", "pingInterval"]),
              members[0]?.isString == true, members[1] != nil else { return nil }
        return "a message is an engine.io open packet 0{\"sid\":..,\"pingInterval\":..}"
    }

    public func decode(_ payload: [UInt8]) -> RealtimeEvent? {
        payload.withUnsafeBufferPointer { bytes in
            guard let packet = SocketIOPacket(bytes) else { return nil }
            return Self.event(of: packet, in: bytes, payload: payload)
        }
    }

    /// Events carry no dialect: another instance's event is this one's too.
    public func adopt(_ event: RealtimeEvent) -> RealtimeEvent? { event }

    public func rewriteHandshake(_ payload: [UInt8], event: RealtimeEvent, _ change: HandshakeChange) -> HandshakeRewrite? {
        guard event.kind == .connectionEstablished else { return nil }
        return SocketIOHandshake.rewrite(payload, change)
    }

    /// The event of a framed packet.
    static func event(of packet: SocketIOPacket, in bytes: UnsafeBufferPointer<UInt8>, payload: [UInt8]) -> RealtimeEvent? {
        let body = payload[packet.payloadStart...]
        switch packet.engine {
        case .open:
            return SocketIOHandshake.event(body)
        case .close:
            // Whoever sends it ends the engine.io session for good: python-engineio's
            // `Client.disconnect` sends it (the app's disconnect), and on the server's
            // `_receive_packet` answers with its own and disconnects while `state` is
            // already 'disconnecting', so python-socketio's `_handle_eio_disconnect` does
            // not reconnect.
            var event = RealtimeEvent(name: "close", channel: nil, dataJSON: nil, kind: .other)
            event.ending = .final
            return event
        case .ping:
            return RealtimeEvent(name: "ping", channel: nil, dataJSON: nil, kind: .ping)
        case .pong:
            return RealtimeEvent(name: "pong", channel: nil, dataJSON: nil, kind: .pong)
        case .upgrade:
            return RealtimeEvent(name: "upgrade", channel: nil, dataJSON: nil, kind: .other)
        case .noop:
            return RealtimeEvent(name: "noop", channel: nil, dataJSON: nil, kind: .other)
        case .message:
            guard let socket = packet.socket else { return nil }
            return socketEvent(socket, packet: packet, body: body)
        }
    }

    /// The event of a socket.io packet; nil when its payload is not what its type needs.
    private static func socketEvent(_ type: SocketIOPacket.SocketType, packet: SocketIOPacket,
                                    body: ArraySlice<UInt8>) -> RealtimeEvent? {
        let json: ArraySlice<UInt8>? = body.isEmpty ? nil : body
        if let json, !json.withUnsafeBufferPointer(JSONSkimmer.isValid) { return nil }
        var event: RealtimeEvent
        switch type {
        case .connect:
            // The server's answer names the namespace's socket id; the client's connect
            // carries only its auth, kept out of the event (it is the app's).
            let answered = json.map { hasMember("sid", $0) } ?? false
            event = answered
                ? RealtimeEvent(name: "connect", channel: packet.namespace, dataJSON: json, kind: .subscriptionSucceeded)
                : RealtimeEvent(name: "connect", channel: packet.namespace, dataJSON: nil, kind: .subscribe)
        case .disconnect:
            event = RealtimeEvent(name: "disconnect", channel: packet.namespace, dataJSON: nil, kind: .unsubscribe)
            // From the server it ends the session for good: python-socketio's
            // `_handle_disconnect` drops the namespace and, with none left, closes the
            // engine.io session without reconnecting. (From the client it is its own
            // disconnect, which the engine reads from the close that follows.)
            event.ending = .final
        case .connectError:
            event = RealtimeEvent(name: "connect_error", channel: packet.namespace, dataJSON: json, kind: .subscriptionError)
        case .event, .binaryEvent:
            guard let json, let name = firstString(ofArray: json) else { return nil }
            event = RealtimeEvent(name: name, channel: packet.namespace, dataJSON: json,
                                  kind: type == .event ? .clientEvent : .other)
        case .ack, .binaryAck:
            guard let json, json.first == UInt8(ascii: "[") else { return nil }
            event = RealtimeEvent(name: type == .ack ? "ack" : "binary_ack", channel: packet.namespace, dataJSON: json, kind: .other)
        }
        event.ref = packet.ackID
        return event
    }

    /// Whether the valid JSON object `json` has the member `key`.
    static func hasMember(_ key: StaticString, _ json: ArraySlice<UInt8>) -> Bool {
        switch JSONSkimmer.members(of: json, named: [key]) {
        case .members(let members): return members[0] != nil
        case .needsParser: return (try? JSONParser.parse(json))?[key.description] != nil
        case .notAnObject: return false
        }
    }

    /// The first element of the valid JSON array `json` when it is a string: a socket.io
    /// event's name. Read from the bytes; only a name holding an escape is parsed.
    static func firstString(ofArray json: ArraySlice<UInt8>) -> String? {
        var index = json.startIndex
        func skipBlanks() {
            while index < json.endIndex, [0x20, 0x09, 0x0A, 0x0D].contains(json[index]) { index += 1 }
        }
        skipBlanks()
        guard index < json.endIndex, json[index] == UInt8(ascii: "[") else { return nil }
        index += 1
        skipBlanks()
        guard index < json.endIndex, json[index] == UInt8(ascii: "\"") else { return nil }
        let open = index
        var escaped = false
        index += 1
        while index < json.endIndex, json[index] != UInt8(ascii: "\"") {
            if json[index] == UInt8(ascii: "\\") { escaped = true; index += 1 }
            index += 1
        }
        guard index < json.endIndex else { return nil }
        let content = json[(open + 1)..<index]
        guard escaped else { return String(decoding: content, as: UTF8.self) }
        return (try? JSONParser.parse(json[open...index]))?.stringValue
    }
}
