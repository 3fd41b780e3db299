import Capture
import Vocabulary
import WebSocket
import Lifecycle
@testable import Reports

/// Hand-made sessions for report tests: times in seconds.
struct Session {
    var records: [CaptureRecord] = []
    static func us(_ s: Double) -> Micros { micros(seconds: s) }

    /// Open, upgrade, 101 and a handshake with socket_id 10 ms later.
    mutating func connect(_ conn: Int, at t: Double, ip: String = "10.0.0.1", agent: String = "sim/1.0") {
        let start = Self.us(t)
        records.append(.open(OpenRecord(conn: conn, t: start, client: "\(ip):\(40000 + conn)", server: "127.0.0.1:80")))
        records.append(.upgrade(UpgradeRecord(conn: conn, t: start + 1000, from: .client, method: "GET",
                                              target: "/app/k?protocol=7", headers: [HeaderField("User-Agent", agent)])))
        records.append(.upgrade(UpgradeRecord(conn: conn, t: start + 2000, from: .server, status: 101, headers: [])))
        text(conn, at: t + 0.01, from: .server, #"{"event":"bird:connection_established","data":"{\"socket_id\":\"\#(conn).1\"}"}"#)
    }

    mutating func text(_ conn: Int, at t: Double, from side: Side, _ body: String) {
        records.append(.frame(FrameRecord(conn: conn, t: Self.us(t), from: side, opcode: .text, masked: side == .client,
                                          payload: Array(body.utf8))))
    }

    mutating func subscribe(_ conn: Int, at t: Double, _ channel: String) {
        text(conn, at: t, from: .client, #"{"event":"bird:subscribe","data":{"channel":"\#(channel)","auth":"k:\#(conn)"}}"#)
        text(conn, at: t + 0.05, from: .server, #"{"event":"bird_internal:subscription_succeeded","channel":"\#(channel)","data":"{}"}"#)
    }

    mutating func ping(_ conn: Int, at t: Double) { text(conn, at: t, from: .client, #"{"event":"bird:ping","data":{}}"#) }
    mutating func pong(_ conn: Int, at t: Double) { text(conn, at: t, from: .server, #"{"event":"bird:pong","data":{}}"#) }

    mutating func end(_ conn: Int, at t: Double, kind: EndKind = .fin) {
        records.append(.end(EndRecord(conn: conn, t: Self.us(t), side: .server, kind: kind)))
    }

    func report(end: Double, secret: String? = nil, failOn: FailOn = .error, pongTimeout: Double? = nil,
                startedAt: Int64? = nil) throws -> AnalysisReport {
        var spec = try SpecLoader.load("bird")
        if let pongTimeout {
            var o = SpecOverrides()
            o.pongTimeout = Self.us(pongTimeout)
            spec = o.apply(to: spec)
        }
        var analyzer = LiveAnalyzer(options: AnalyzerOptions(spec: spec, appSecret: secret))
        var builder = ReportBuilder()
        for r in records { builder.add(analyzer.feed(r)) }
        builder.add(analyzer.finish(at: Self.us(end)))
        return builder.build(spec: spec, inputs: ["session.jsonl"], grouping: ClientKeyMode.standard.description,
                             prefix: analyzer.prefix, endTime: Self.us(end),
                             unchecked: RuleRegistry.unchecked(spec: spec, appSecret: secret), failOn: failOn,
                             startedAt: startedAt)
    }

    /// Client 1 loses private-chat to a drop and never subscribes again; the capture ends
    /// inside its resubscribe window. Client 2's ping goes unanswered (a server warning).
    static func undeterminedAndWarning() -> Session {
        var s = Session()
        s.connect(1, at: 0)
        s.subscribe(1, at: 0.1, "private-chat")
        s.connect(2, at: 0.5, ip: "10.0.0.2")
        s.ping(2, at: 1)
        // Closed for the missing pong in time (no stale.close-missing), but after the pong
        // timeout: server.pong-missing, a warning.
        s.records.append(.frame(FrameRecord(conn: 2, t: Session.us(2.1), from: .client, opcode: .close, masked: true, payload: [0x10, 0x69])))
        s.end(1, at: 3)
        s.connect(3, at: 3.7)
        return s
    }
}
