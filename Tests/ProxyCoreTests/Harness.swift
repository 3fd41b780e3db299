import Capture
import Faults
import Vocabulary
import WebSocket
@testable import ProxyCore

/// Drives a `RelaySession` with scripted events and a fake clock, and reads its commands.
struct Harness {
    var session: RelaySession
    var now: Micros = 0
    /// Every command so far, in order.
    var log: [RelayCommand] = []

    init(config: RelayConfig = RelayConfig(upstreamHost: "upstream.test:9000"), faults: FaultEngine? = nil,
         maskSeed: UInt64 = 99) {
        session = RelaySession(conn: 1, clientAddress: "127.0.0.1:50000", listenAddress: "127.0.0.1:8080",
                               upstreamAddress: "upstream.test:9000", config: config, faults: faults,
                               maskSeed: maskSeed)
        log = session.start(now: now)
    }

    @discardableResult
    mutating func handle(_ event: RelayEvent, at time: Micros? = nil) -> [RelayCommand] {
        if let time { now = time }
        let commands = session.handle(event, now: now)
        log += commands
        return commands
    }

    @discardableResult
    mutating func client(_ bytes: [UInt8]) -> [RelayCommand] { handle(.received(from: .client, bytes: bytes)) }
    @discardableResult
    mutating func server(_ bytes: [UInt8]) -> [RelayCommand] { handle(.received(from: .server, bytes: bytes)) }

    /// Runs the upgrade to the open WebSocket with the standard request and a 101.
    mutating func open(responseExtra: String = "", request: [UInt8] = Wire.request) {
        client(request)
        handle(.upstreamConnected)
        server(Wire.response101(extra: responseExtra))
    }

    /// Fires the last scheduled timer at its time.
    @discardableResult
    mutating func fireTimer() -> [RelayCommand] {
        guard let (id, at) = log.lazy.compactMap({ cmd -> (Int, Micros)? in
            if case .schedule(let id, let at) = cmd { (id, at) } else { nil }
        }).last else { return [] }
        return handle(.timer(id: id), at: at)
    }
}

/// Reading commands.
extension Array where Element == RelayCommand {
    func sent(to side: Side) -> [UInt8] {
        flatMap { cmd -> [UInt8] in if case .send(side, let bytes) = cmd { bytes } else { [] } }
    }

    var records: [CaptureRecord] {
        compactMap { if case .record(let r) = $0 { r } else { nil } }
    }

    var frameRecords: [FrameRecord] {
        records.compactMap { if case .frame(let f) = $0 { f } else { nil } }
    }

    var notes: [NoteRecord] { records.compactMap { if case .note(let n) = $0 { n } else { nil } } }
    var faults: [FaultRecord] { records.compactMap { if case .fault(let f) = $0 { f } else { nil } } }
    var ends: [EndRecord] { records.compactMap { if case .end(let e) = $0 { e } else { nil } } }
    var upgrades: [UpgradeRecord] { records.compactMap { if case .upgrade(let u) = $0 { u } else { nil } } }

    /// Socket-level commands only (no records, no bytes), for checking how a pair ends.
    var socketCommands: [RelayCommand] {
        filter {
            switch $0 {
            case .shutdown, .reset, .close, .connectUpstream: true
            default: false
            }
        }
    }
}

/// Bytes on the wire.
enum Wire {
    static let key = "dGhlIHNhbXBsZSBub25jZQ=="

    static let requestText = "GET /app/key?protocol=7 HTTP/1.1\r\nHost: 127.0.0.1:8080\r\nUser-Agent: pysher/1.0\r\n"
        + "Upgrade: websocket\r\nConnection: Upgrade\r\nSec-WebSocket-Key: \(key)\r\n"
        + "Sec-WebSocket-Version: 13\r\nSec-WebSocket-Protocol: chat\r\n"
        + "Sec-WebSocket-Extensions: permessage-deflate; client_max_window_bits\r\n\r\n"
    static var request: [UInt8] { Array(requestText.utf8) }

    static func response101(extra: String = "") -> [UInt8] {
        Array(("HTTP/1.1 101 Switching Protocols\r\nUpgrade: websocket\r\nConnection: Upgrade\r\n"
            + "Sec-WebSocket-Accept: s3pPLMBiTxaQ9kYGzzhZRbK+xOo=\r\n\(extra)\r\n").utf8)
    }

    static let clientKey = MaskingKey(1, 2, 3, 4)

    static func fromClient(_ frame: Frame) -> [UInt8] {
        var frame = frame
        frame.maskingKey = clientKey
        return FrameEncoder.encode(frame)
    }

    static func fromServer(_ frame: Frame) -> [UInt8] { FrameEncoder.encode(frame) }

    /// All frames in `bytes` (decoded with a fresh decoder).
    static func frames(_ bytes: [UInt8]) throws -> [Frame] {
        var decoder = FrameDecoder()
        decoder.append(bytes)
        var frames: [Frame] = []
        while let frame = try decoder.next() { frames.append(frame) }
        return frames
    }

    static func event(_ name: String, data: String = "{}") -> Frame {
        .text(#"{"event":"\#(name)","data":\#(data)}"#)
    }
}
