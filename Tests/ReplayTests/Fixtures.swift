import Capture
import Vocabulary
import WebSocket
@testable import Replay

/// Hand-built recordings for the pure tests: a Bird-style conversation in which the server
/// greets, the client subscribes, the server confirms, then closes with 4009.
enum Fixture {
    static let key = "dGhlIHNhbXBsZSBub25jZQ=="

    static func text(_ conn: Int = 1, _ t: Micros, _ from: Side, _ text: String, action: FrameAction = .forwarded) -> FrameRecord {
        FrameRecord(conn: conn, t: t, from: from, opcode: .text, masked: from == .client, payload: Array(text.utf8), action: action)
    }

    static func close(_ conn: Int = 1, _ t: Micros, _ from: Side, _ code: UInt16, _ reason: String) -> FrameRecord {
        FrameRecord(conn: conn, t: t, from: from, opcode: .close, masked: from == .client,
                    payload: Frame.close(code: code, reason: reason).payload)
    }

    static let established = #"{"event":"bird:connection_established","data":"{\"socket_id\":\"111.222\",\"activity_timeout\":120}"}"#
    static let subscribe = #"{"event":"bird:subscribe","data":{"channel":"private-orders","auth":"key:aaaa"}}"#
    static let succeeded = #"{"event":"bird_internal:subscription_succeeded","channel":"private-orders","data":"{}"}"#
    static let typing = #"{"event":"client-typing","channel":"private-orders","data":{"socket_id":"111.222"}}"#

    static func request(_ conn: Int = 1, t: Micros = 1_000) -> UpgradeRecord {
        UpgradeRecord(conn: conn, t: t, from: .client, method: "GET", target: "/app/key?protocol=7",
                      headers: [HeaderField("Host", "example:80"), HeaderField("Upgrade", "websocket"),
                                HeaderField("Connection", "Upgrade"), HeaderField("Sec-WebSocket-Key", "recordedkey=="),
                                HeaderField("Sec-WebSocket-Version", "13"), HeaderField("User-Agent", "BirdRealtime/2.3")])
    }

    static func response(_ conn: Int = 1, t: Micros = 2_000, status: Int = 101) -> UpgradeRecord {
        UpgradeRecord(conn: conn, t: t, from: .server, status: status, reason: status == 101 ? "Switching Protocols" : "Service Unavailable",
                      headers: [HeaderField("Upgrade", "websocket"), HeaderField("Connection", "Upgrade"),
                                HeaderField("Sec-WebSocket-Accept", "recordedaccept="), HeaderField("X-Server", "bird")])
    }

    /// Response at 2 ms; established at 10 ms; subscribe at 50 ms; succeeded at 60 ms;
    /// close 4009 from the server at 1.060 s; the client's reply at 1.070 s; server FIN at 1.080 s.
    static func conversation(conn: Int = 1) -> RecordedConnection {
        var recording = RecordedConnection(conn: conn, openedAt: 0, clientAddress: "10.0.0.7:5000",
                                           request: request(conn), response: response(conn), frames: [
            text(conn, 10_000, .server, established),
            text(conn, 50_000, .client, subscribe),
            text(conn, 60_000, .server, succeeded),
            close(conn, 1_060_000, .server, 4009, "terminated"),
            close(conn, 1_070_000, .client, 4009, "terminated"),
        ])
        recording.serverEnd = RecordedEnding(kind: .fin, t: 1_080_000)
        recording.clientEnd = RecordedEnding(kind: .fin, t: 1_081_000)
        return recording
    }

    static func liveRequest(key: String = Fixture.key) -> HTTPRequestHead {
        WebSocketHandshake.request(host: "127.0.0.1:9", target: "/app/key?protocol=7", key: key)
    }

    static func clientFrame(_ text: String) -> Frame { Frame.text(text, maskingKey: MaskingKey(1, 2, 3, 4)) }
}

extension [ReplayAction] {
    var sentFrames: [Frame] { compactMap { if case .send(let f) = $0 { f } else { nil } } }
    var sentTexts: [String] { sentFrames.map { String(decoding: $0.payload, as: UTF8.self) } }
    var deviations: [Deviation] { compactMap { if case .report(let d) = $0 { d } else { nil } } }
    var schedules: [Micros] { compactMap { if case .schedule(let at) = $0 { at } else { nil } } }
    var writes: [[UInt8]] { compactMap { if case .write(let b) = $0 { b } else { nil } } }
    var isFinished: Bool { contains(.finished) }
}
