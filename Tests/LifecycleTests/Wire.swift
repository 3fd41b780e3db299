import Capture
import Vocabulary
import WebSocket
@testable import Lifecycle

/// Builds hand-made record sequences for rule tests: times in seconds, Bird events as text.
struct Wire {
    var records: [CaptureRecord] = []
    var nextConn = 1

    static func us(_ seconds: Double) -> Micros { micros(seconds: seconds) }

    /// TCP open, upgrade request and 101, and (unless nil) the server's handshake 10 ms later.
    @discardableResult
    mutating func connect(at t: Double, ip: String = "10.0.0.1", agent: String = "sim/1.0",
                          socketID: String? = nil, missingID: Bool = false, activityTimeout: Int? = nil, handshake: Bool = true,
                          status: Int = 101) -> ConnectionID {
        let conn = nextConn
        nextConn += 1
        let start = Self.us(t)
        records.append(.open(OpenRecord(conn: conn, t: start, client: "\(ip):\(40000 + conn)", server: "127.0.0.1:8080")))
        records.append(.upgrade(UpgradeRecord(conn: conn, t: start + 1000, from: .client, method: "GET",
                                              target: "/app/key?protocol=7&client=js&version=1.0&t=\(conn)",
                                              headers: [HeaderField("User-Agent", agent)])))
        records.append(.upgrade(UpgradeRecord(conn: conn, t: start + 2000, from: .server, status: status, headers: [])))
        guard handshake, status == 101 else { return conn }
        let id: String? = missingID ? nil : socketID ?? "\(conn).\(conn * 7)"
        var data = id.map { "\\\"socket_id\\\":\\\"\($0)\\\"" } ?? ""
        if let activityTimeout { data += (data.isEmpty ? "" : ",") + "\\\"activity_timeout\\\":\(activityTimeout)" }
        server(conn, at: t + 0.01, #"{"event":"bird:connection_established","data":"{\#(data)}"}"#)
        return conn
    }

    mutating func text(_ conn: ConnectionID, at t: Double, from side: Side, _ body: String, action: FrameAction = .forwarded, fault: String? = nil) {
        records.append(.frame(FrameRecord(conn: conn, t: Self.us(t), from: side, opcode: .text, masked: side == .client,
                                          payload: Array(body.utf8), action: action, fault: fault)))
    }

    mutating func server(_ conn: ConnectionID, at t: Double, _ body: String, action: FrameAction = .forwarded, fault: String? = nil) {
        text(conn, at: t, from: .server, body, action: action, fault: fault)
    }

    mutating func client(_ conn: ConnectionID, at t: Double, _ body: String) {
        text(conn, at: t, from: .client, body)
    }

    /// A WebSocket control frame (ping or pong) without payload.
    mutating func control(_ conn: ConnectionID, at t: Double, from side: Side, _ opcode: Opcode) {
        records.append(.frame(FrameRecord(conn: conn, t: Self.us(t), from: side, opcode: opcode, masked: side == .client,
                                          payload: [])))
    }

    mutating func ping(_ conn: ConnectionID, at t: Double) { client(conn, at: t, #"{"event":"bird:ping","data":{}}"#) }
    mutating func pong(_ conn: ConnectionID, at t: Double, from side: Side = .server, action: FrameAction = .forwarded,
                       fault: String? = nil) {
        text(conn, at: t, from: side, #"{"event":"bird:pong","data":{}}"#, action: action, fault: fault)
    }

    mutating func subscribe(_ conn: ConnectionID, at t: Double, _ channel: String, auth: String? = nil) {
        let authPart = auth.map { #","auth":"\#($0)""# } ?? ""
        client(conn, at: t, #"{"event":"bird:subscribe","data":{"channel":"\#(channel)"\#(authPart)}}"#)
    }

    mutating func subscribed(_ conn: ConnectionID, at t: Double, _ channel: String) {
        server(conn, at: t, #"{"event":"bird_internal:subscription_succeeded","channel":"\#(channel)","data":"{}"}"#)
    }

    /// A close frame; the peer's echo and both FINs follow 5 ms later.
    mutating func close(_ conn: ConnectionID, at t: Double, from side: Side, code: UInt16, action: FrameAction = .forwarded, fault: String? = nil) {
        let start = Self.us(t)
        let payload = [UInt8(code >> 8), UInt8(code & 0xFF)]
        records.append(.frame(FrameRecord(conn: conn, t: start, from: side, opcode: .close, masked: side == .client,
                                          payload: payload, action: action, fault: fault)))
        records.append(.frame(FrameRecord(conn: conn, t: start + 3000, from: side.other, opcode: .close,
                                          masked: side.other == .client, payload: payload)))
        records.append(.end(EndRecord(conn: conn, t: start + 5000, side: .server, kind: .fin)))
        records.append(.end(EndRecord(conn: conn, t: start + 5000, side: .client, kind: .fin)))
    }

    /// A close frame the peer never answers (no echo, no FIN).
    mutating func unansweredClose(_ conn: ConnectionID, at t: Double, from side: Side, code: UInt16) {
        records.append(.frame(FrameRecord(conn: conn, t: Self.us(t), from: side, opcode: .close, masked: side == .client,
                                          payload: [UInt8(code >> 8), UInt8(code & 0xFF)])))
    }

    mutating func end(_ conn: ConnectionID, at t: Double, side: Side = .server, kind: EndKind = .rst) {
        records.append(.end(EndRecord(conn: conn, t: Self.us(t), side: side, kind: kind)))
    }

    mutating func fault(_ conn: ConnectionID, at t: Double, rule: String, kind: String) {
        records.append(.fault(FaultRecord(conn: conn, t: Self.us(t), rule: rule, kind: kind, detail: "test")))
    }

    /// Keeps a connected client alive with server traffic every 60 s, so stale checks stay quiet.
    mutating func keepAlive(_ conn: ConnectionID, from: Double, to: Double) {
        var t = from + 60
        while t < to {
            server(conn, at: t, #"{"event":"news","channel":"public","data":"{}"}"#)
            t += 60
        }
    }
}

struct Outcome {
    var events: [AnalysisEvent]
    var findings: [Finding] { events.compactMap { if case .finding(let f) = $0 { f } else { nil } } }
    var transitions: [Transition] { events.compactMap { if case .transition(let t) = $0 { t } else { nil } } }
    var clients: [ClientInfo] { events.compactMap { if case .client(let c) = $0 { c } else { nil } } }
    func rules() -> [String] { findings.map(\.rule) }
    func findings(_ rule: String) -> [Finding] { findings.filter { $0.rule == rule } }
}

func analyze(_ wire: Wire, spec name: String = "bird", secret: String? = nil, key: ClientKeyMode = .standard,
             end: Double? = nil) throws -> Outcome {
    try analyze(wire, spec: try SpecLoader.load(name), secret: secret, key: key, end: end)
}

func analyze(_ wire: Wire, spec: LifecycleSpec, secret: String? = nil, key: ClientKeyMode = .standard,
             end: Double? = nil) throws -> Outcome {
    var analyzer = LiveAnalyzer(options: AnalyzerOptions(spec: spec, clientKey: key, appSecret: secret))
    var events: [AnalysisEvent] = []
    for record in wire.records { events += analyzer.feed(record) }
    events += analyzer.finish(at: end.map { Wire.us($0) })
    return Outcome(events: events)
}

extension Wire {
    mutating func handshake(_ conn: ConnectionID, at t: Double, socketID: String = "9.9") {
        server(conn, at: t, #"{"event":"bird:connection_established","data":"{\"socket_id\":\"\#(socketID)\"}"}"#)
    }
}
