/// One WebSocket text message of engine.io v4 as the websocket transport sends it: one
/// engine.io packet, its type a digit (`0` open, `1` close, `2` ping, `3` pong, `4`
/// message, `5` upgrade, `6` noop) before its data. A message packet carries one
/// socket.io v5 packet: its type digit (`0` connect, `1` disconnect, `2` event, `3` ack,
/// `4` connect_error, `5` binary event, `6` binary ack), for binary packets the number of
/// attachments and `-`, a namespace `/name,` unless it is `/`, an ack id (digits), then
/// its JSON payload. This is only the framing: where the parts are, no JSON read yet.
struct SocketIOPacket: Equatable {
    /// The longest namespace read (a name is a short path); longer is no packet.
    static let maxNamespace = 256
    /// The longest ack id read (an unsigned 64-bit number has 20 digits).
    static let maxAckDigits = 20

    enum EngineType: UInt8 {
        case open = 0x30, close, ping, pong, message, upgrade, noop
    }

    enum SocketType: UInt8 {
        case connect = 0x30, disconnect, event, ack, connectError, binaryEvent, binaryAck
    }

    var engine: EngineType
    /// The socket.io packet of a message packet; nil for the other engine.io packets, and
    /// for a message whose data is no socket.io packet.
    var socket: SocketType?
    /// The namespace of a socket.io packet, `/` when none is written.
    var namespace: String = "/"
    /// The ack id of an event or ack, as written.
    var ackID: String?
    /// Where the packet's data starts in the message (the JSON payload for socket.io
    /// packets, the text after the type digit for the others).
    var payloadStart: Int

    /// The framing of `bytes`; nil when they are no engine.io packet (empty, no type digit,
    /// a namespace or ack id past its bound).
    init?(_ bytes: UnsafeBufferPointer<UInt8>) {
        guard let first = bytes.first, let engine = EngineType(rawValue: first) else { return nil }
        self.engine = engine
        payloadStart = 1
        guard engine == .message, bytes.count > 1, let socket = SocketType(rawValue: bytes[1]) else { return }
        var index = 2
        if socket == .binaryEvent || socket == .binaryAck {
            // The attachments count, then '-'.
            let digits = Self.digits(in: bytes, from: index)
            guard digits > 0, digits <= Self.maxAckDigits, index + digits < bytes.count,
                  bytes[index + digits] == UInt8(ascii: "-") else { return nil }
            index += digits + 1
        }
        if index < bytes.count, bytes[index] == UInt8(ascii: "/") {
            var end = index
            while end < bytes.count, bytes[end] != UInt8(ascii: ",") { end += 1 }
            guard end - index <= Self.maxNamespace else { return nil }
            namespace = String(decoding: UnsafeBufferPointer(rebasing: bytes[index..<end]), as: UTF8.self)
            index = min(end + 1, bytes.count)
        }
        if socket == .event || socket == .ack || socket == .binaryEvent || socket == .binaryAck {
            let digits = Self.digits(in: bytes, from: index)
            guard digits <= Self.maxAckDigits else { return nil }
            if digits > 0 {
                ackID = String(decoding: UnsafeBufferPointer(rebasing: bytes[index..<index + digits]), as: UTF8.self)
                index += digits
            }
        }
        self.socket = socket
        payloadStart = index
    }

    /// How many ASCII digits start at `start`.
    private static func digits(in bytes: UnsafeBufferPointer<UInt8>, from start: Int) -> Int {
        var end = start
        while end < bytes.count, bytes[end] >= UInt8(ascii: "0"), bytes[end] <= UInt8(ascii: "9") { end += 1 }
        return end - start
    }
}
