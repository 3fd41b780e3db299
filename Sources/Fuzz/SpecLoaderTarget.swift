import Capture
import Lifecycle
import Vocabulary
import WebSocket

extension FuzzTarget {
    /// The input as a `--spec FILE`; a spec that loads analyzes a short session (connect,
    /// ping, stale close, reconnect, refusal), so its numbers meet the rules' arithmetic.
    static let specLoader = FuzzTarget(
        name: "spec-loader",
        summary: "SpecLoader.parse + LiveAnalyzer on a short session with the loaded spec") { input in
        guard let spec = try? SpecLoader.parse(Array(input), file: "fuzz.json") else { return }
        var analyzer = LiveAnalyzer(options: AnalyzerOptions(spec: spec))
        for record in sampleSession { _ = analyzer.feed(record) }
        _ = analyzer.finish(at: nil)
    }

    static let sampleSession: [CaptureRecord] = {
        var records: [CaptureRecord] = []
        func connect(_ conn: Int, at t: Micros, status: Int = 101) {
            records.append(.open(OpenRecord(conn: conn, t: t, client: "10.0.0.1:\(5000 + conn)", server: "10.0.0.2:80")))
            records.append(.upgrade(UpgradeRecord(conn: conn, t: t + 1_000, from: .client, method: "GET", target: "/app/k?protocol=7",
                                                  headers: [HeaderField("User-Agent", "fuzz")])))
            records.append(.upgrade(UpgradeRecord(conn: conn, t: t + 2_000, from: .server, status: status, headers: [])))
            guard status == 101 else { return }
            text(conn, at: t + 3_000, from: .server,
                 #"{"event":"bird:connection_established","data":"{\"socket_id\":\"\#(conn).1\",\"activity_timeout\":1}"}"#)
        }
        func text(_ conn: Int, at t: Micros, from side: Side, _ body: String) {
            records.append(.frame(FrameRecord(conn: conn, t: t, from: side, opcode: .text, masked: side == .client,
                                              payload: Array(body.utf8))))
        }
        func close(_ conn: Int, at t: Micros, from side: Side, code: UInt16) {
            records.append(.frame(FrameRecord(conn: conn, t: t, from: side, opcode: .close, masked: side == .client,
                                              payload: [UInt8(code >> 8), UInt8(code & 0xFF)])))
            records.append(.end(EndRecord(conn: conn, t: t + 1_000, side: side, kind: .fin)))
        }
        connect(1, at: 0)
        text(1, at: 2_000_000, from: .client, #"{"event":"bird:subscribe","data":{"channel":"a"}}"#)
        text(1, at: 3_000_000, from: .client, #"{"event":"bird:ping","data":{}}"#)
        close(1, at: 35_000_000, from: .client, code: 4201)
        connect(2, at: 36_000_000)
        close(2, at: 40_000_000, from: .server, code: 4009)
        connect(3, at: 41_000_000, status: 503)
        connect(4, at: 50_000_000)
        records.append(.end(EndRecord(conn: 4, t: 60_000_000, side: .server, kind: .rst)))
        return records
    }()
}
