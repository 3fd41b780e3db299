import Vocabulary
import WebSocket

/// What one endpoint of a test connection received.
enum WireEvent: Equatable {
    case message(Opcode, [UInt8], frames: Int, compressed: Bool)
    case ping([UInt8])
    case pong([UInt8])
    case close(ClosePayload)
    case endOfStream

    var text: String? {
        if case .message(.text, let bytes, _, _) = self { return String(decoding: bytes, as: UTF8.self) }
        return nil
    }
}

/// Our codec driving a real socket, as a client or server, for interop tests: handshake,
/// framing, masking, validation, fragmentation and permessage-deflate, with no other code
/// between the socket and the codec.
final class WireConnection {
    let socket: TestSocket
    let isClient: Bool
    private var decoder = FrameDecoder()
    private var validator: MessageValidator
    private var generator = SeededGenerator(seed: 2026)
    private let inflater: MessageInflater?
    private let deflater: MessageDeflater?
    /// Every rule the peer's frames broke (expected to stay empty against a correct peer).
    private(set) var violations: [WebSocketError] = []
    private var partial: (opcode: Opcode, payload: [UInt8], frames: Int, compressed: Bool)?

    private init(socket: TestSocket, isClient: Bool, deflate: DeflateParameters?, leftover: [UInt8]) {
        self.socket = socket
        self.isClient = isClient
        validator = MessageValidator(rsv1Allowed: deflate != nil, expectMasked: !isClient)
        inflater = deflate?.makeInflater(forMessagesFromClient: !isClient)
        deflater = deflate?.makeDeflater(forMessagesFromClient: isClient)
        decoder.append(leftover)
    }

    var deflateNegotiated: Bool { deflater != nil }

    /// Connects, sends an upgrade request (offering permessage-deflate if asked) and checks
    /// the 101 response.
    static func connect(port: UInt16, offerDeflate: Bool) throws -> WireConnection {
        let socket = try TestSocket.connect(port: port)
        var generator = SeededGenerator(seed: 7)
        let key = WebSocketHandshake.makeKey(using: &generator)
        let extra = offerDeflate ? [HeaderField("Sec-WebSocket-Extensions", "permessage-deflate; client_max_window_bits")] : []
        let request = WebSocketHandshake.request(host: "127.0.0.1:\(port)", target: "/", key: key, extraHeaders: extra)
        try socket.send(request.serialized)
        var parser = HTTPHeadParser()
        var response: HTTPResponseHead?
        while response == nil {
            let bytes = try socket.receive()
            guard !bytes.isEmpty else { throw SocketError(message: "server closed during the handshake") }
            parser.append(bytes)
            response = try parser.parseResponse()
        }
        if let problem = WebSocketHandshake.problem(with: response!, forKey: key) {
            throw SocketError(message: "handshake refused: \(problem)")
        }
        return WireConnection(socket: socket, isClient: true,
                              deflate: DeflateParameters.negotiated(in: response!.headers), leftover: parser.remainder)
    }

    /// Accepts one client, reads its upgrade request and answers 101 (agreeing to
    /// permessage-deflate with default parameters if offered and `allowDeflate`).
    static func accept(on listener: TestSocket, allowDeflate: Bool) throws -> (WireConnection, HTTPRequestHead) {
        let socket = try listener.accept()
        var parser = HTTPHeadParser()
        var request: HTTPRequestHead?
        while request == nil {
            let bytes = try socket.receive()
            guard !bytes.isEmpty else { throw SocketError(message: "client closed during the handshake") }
            parser.append(bytes)
            request = try parser.parseRequest()
        }
        guard request!.isWebSocketUpgrade else { throw SocketError(message: "not an upgrade: \(request!)") }
        let offered = request!.headers.values(named: "Sec-WebSocket-Extensions")
            .contains { $0.lowercased().contains("permessage-deflate") }
        let agreed: DeflateParameters? = allowDeflate && offered ? DeflateParameters() : nil
        let extra = agreed.map { [HeaderField("Sec-WebSocket-Extensions", $0.headerValue)] } ?? []
        try socket.send(WebSocketHandshake.response(accepting: request!, extraHeaders: extra).serialized)
        return (WireConnection(socket: socket, isClient: false, deflate: agreed, leftover: parser.remainder), request!)
    }

    func send(_ frame: Frame) throws {
        var frame = frame
        frame.maskingKey = isClient ? MaskingKey.random(using: &generator) : nil
        try socket.send(FrameEncoder.encode(frame))
    }

    /// Sends a data message in `fragments` frames, compressed when deflate was agreed.
    /// `between` frames (pings) go out after the first fragment, as RFC 6455 5.4 allows.
    func sendMessage(_ opcode: Opcode, _ payload: [UInt8], fragments: Int = 1, between: [Frame] = []) throws {
        let body = deflater?.deflate(payload) ?? payload
        let size = max(1, (body.count + fragments - 1) / fragments)
        var pieces: [[UInt8]] = stride(from: 0, to: body.count, by: size).map { Array(body[$0..<min(body.count, $0 + size)]) }
        while pieces.count < fragments { pieces.append([]) }
        for (index, piece) in pieces.enumerated() {
            try send(Frame(fin: index == pieces.count - 1, rsv1: index == 0 && deflater != nil,
                           opcode: index == 0 ? opcode : .continuation, payload: piece))
            if index == 0 { for frame in between { try send(frame) } }
        }
    }

    func sendText(_ text: String, fragments: Int = 1) throws { try sendMessage(.text, Array(text.utf8), fragments: fragments) }

    /// The next frame, validated; nil at end of stream.
    func readFrame() throws -> Frame? {
        while true {
            if let frame = try decoder.next() {
                if let error = validator.validate(frame) { violations.append(error) }
                return frame
            }
            let bytes = try socket.receive()
            if bytes.isEmpty { return nil }
            decoder.append(bytes)
        }
    }

    /// The next control frame or whole message.
    func readEvent() throws -> WireEvent {
        while let frame = try readFrame() {
            switch frame.opcode {
            case .ping: return .ping(frame.payload)
            case .pong: return .pong(frame.payload)
            case .close: return .close(ClosePayload.lenient(frame.payload))
            case .continuation:
                guard partial != nil else { throw SocketError(message: "continuation without a message") }
                partial!.payload += frame.payload
                partial!.frames += 1
            default:
                partial = (frame.opcode, frame.payload, 1, frame.rsv1)
            }
            if frame.fin, let message = partial {
                partial = nil
                var payload = message.payload
                if message.compressed {
                    guard let inflater else { throw SocketError(message: "RSV1 set without deflate") }
                    payload = try inflater.inflate(payload)
                }
                return .message(message.opcode, payload, frames: message.frames, compressed: message.compressed)
            }
        }
        return .endOfStream
    }
}
