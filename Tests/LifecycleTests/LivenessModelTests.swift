import Testing
import Capture
import Protocols
import Vocabulary
import WebSocket
@testable import Lifecycle

/// The liveness models of docs/spec-format.md, each from the doc's own example, on a
/// conforming and a deviating timeline. Bird's wire stands in for the protocols here: its
/// `ping` and `pong` events have the kinds the models read (a Phoenix or engine.io entry
/// decodes to the same kinds); refs and the announced ping schedule, which Bird's wire has
/// not, are given on hand-made events (`Driver`).
@Suite struct LivenessModelTests {
    static let staleRules = ["stale.ping-missing", "stale.close-missing", "stale.close-code", "server.pong-missing",
                             "stale.pong-missing", "backoff.bound"]

    static func spec(_ example: String) throws -> LifecycleSpec {
        try PolicyExampleTests.spec(backoff: "full", stale: example, rules: staleRules)
    }

    @Test func pingAfterSilence() throws {
        let spec = try Self.spec("ping-after-silence")
        var wire = Wire()
        let a = wire.connect(at: 0)
        wire.ping(a, at: 120)
        wire.pong(a, at: 120.1)
        #expect(try analyze(wire, spec: spec, end: 200).findings.isEmpty)
        var silent = Wire()
        silent.connect(at: 0)
        #expect(try analyze(silent, spec: spec, end: 200).rules() == ["stale.ping-missing"])
    }

    /// A heartbeat every 30 s whatever the traffic; only a pong answers it.
    @Test func heartbeat() throws {
        let spec = try Self.spec("heartbeat")
        var beating = Wire()
        let a = beating.connect(at: 0)
        for t in [30.0, 60, 90] {
            beating.server(a, at: t - 10, #"{"event":"news","channel":"public","data":"{}"}"#)
            beating.ping(a, at: t)
            beating.pong(a, at: t + 0.05)
        }
        #expect(try analyze(beating, spec: spec, end: 100).findings.isEmpty)

        // Traffic does not excuse a missing heartbeat: the second comes 45 s after the first.
        var skipped = Wire()
        let b = skipped.connect(at: 0)
        skipped.ping(b, at: 30)
        skipped.pong(b, at: 30.05)
        skipped.keepAlive(b, from: 0, to: 100)
        skipped.ping(b, at: 75)
        skipped.pong(b, at: 75.05)
        let late = try analyze(skipped, spec: spec, end: 100)
        #expect(late.rules() == ["stale.ping-missing"])
        #expect(late.findings.first?.message == "no heartbeat within 30.25 s of the last one at 30.00 s (interval 30.00 s + tolerance)")

        // Traffic does not answer a heartbeat either: the client must close.
        var unanswered = Wire()
        let c = unanswered.connect(at: 0)
        unanswered.ping(c, at: 30)
        unanswered.server(c, at: 40, #"{"event":"news","channel":"public","data":"{}"}"#)
        let open = try analyze(unanswered, spec: spec, end: 70)
        #expect(open.rules().sorted() == ["server.pong-missing", "stale.close-missing"])
    }

    /// Phoenix closes with 1000 after a missed heartbeat: a stale close, not disconnect(),
    /// so the retry after it is checked like any other.
    @Test func closeAfterMissedHeartbeatIsStaleWhateverItsCode() throws {
        let spec = try Self.spec("heartbeat")
        func closesWith1000(retryAfter delay: Double) throws -> Outcome {
            var wire = Wire()
            let a = wire.connect(at: 0)
            wire.ping(a, at: 30)
            wire.close(a, at: 60, from: .client, code: 1000)
            wire.connect(at: 60 + delay)
            return try analyze(wire, spec: spec, end: 70)
        }
        let prompt = try closesWith1000(retryAfter: 0.5)
        #expect(prompt.findings.isEmpty)
        #expect(!prompt.transitions.contains { $0.to == "disconnected" })
        let slow = try closesWith1000(retryAfter: 5)
        #expect(slow.rules() == ["backoff.bound"])
        // The same close after an answered heartbeat is the app's disconnect(): no retry owed.
        var answered = Wire()
        let b = answered.connect(at: 0)
        answered.ping(b, at: 30)
        answered.pong(b, at: 30.05)
        answered.close(b, at: 50, from: .client, code: 1000)
        answered.connect(at: 59)
        try Self.expectAppDisconnect(answered, spec: spec, end: 70)
    }

    /// The client's close is read as the app's disconnect(): no finding, state disconnected.
    static func expectAppDisconnect(_ wire: Wire, spec: LifecycleSpec, end: Double,
                                    sourceLocation: SourceLocation = #_sourceLocation) throws {
        let out = try analyze(wire, spec: spec, end: end)
        #expect(out.findings.isEmpty, sourceLocation: sourceLocation)
        #expect(out.transitions.contains { $0.to == "disconnected" }, sourceLocation: sourceLocation)
    }

    /// A reply answers the heartbeat whose ref it carries, not an older one.
    @Test func heartbeatReplyIsMatchedByRef() throws {
        var spec = try Self.spec("heartbeat")
        spec.connectedOn = .upgrade
        var matched = Driver(spec: spec)
        matched.connect(1, at: 0)
        matched.frame(1, at: 30, from: .client, .ping, ref: "7")
        matched.frame(1, at: 30.1, from: .server, .pong, ref: "7")
        #expect(matched.finish(at: 59).findings.isEmpty)
        var stale = Driver(spec: spec)
        stale.connect(1, at: 0)
        stale.frame(1, at: 30, from: .client, .ping, ref: "7")
        stale.frame(1, at: 30.1, from: .server, .pong, ref: "6")
        #expect(stale.finish(at: 70).rules().sorted() == ["server.pong-missing", "stale.close-missing"])
    }

    /// engine.io: the server pings, the client answers each ping; no ping for interval +
    /// timeout (25 + 20 s) and the client must give the connection up.
    @Test func serverPings() throws {
        let spec = try Self.spec("server-ping")
        var alive = Wire()
        let a = alive.connect(at: 0)
        for t in [25.0, 50, 75] {
            alive.server(a, at: t, #"{"event":"bird:ping","data":{}}"#)
            alive.pong(a, at: t + 0.05, from: .client)
        }
        #expect(try analyze(alive, spec: spec, end: 100).findings.isEmpty)

        var mute = Wire()
        let b = mute.connect(at: 0)
        mute.server(b, at: 25, #"{"event":"bird:ping","data":{}}"#)
        let unanswered = try analyze(mute, spec: spec, end: 40)
        #expect(unanswered.rules() == ["stale.pong-missing"])

        var silent = Wire()
        let c = silent.connect(at: 0)
        silent.server(c, at: 25, #"{"event":"bird:ping","data":{}}"#)
        silent.pong(c, at: 25.05, from: .client)
        let kept = try analyze(silent, spec: spec, end: 100)
        #expect(kept.rules() == ["stale.close-missing"])
        #expect(kept.findings.first?.message == "no server ping for 45.00 s after the last server ping and the connection still open > bound 45.25 s (ping interval 25.00 s + ping timeout 20.00 s + tolerance)")

        // Giving up at the deadline with 1000 is a stale close; the retry is checked.
        silent.close(c, at: 70, from: .client, code: 1000)
        silent.connect(at: 70.5)
        #expect(try analyze(silent, spec: spec, end: 80).findings.isEmpty)
    }

    /// SignalR's JavaScript client: a message from the client at least every 15 s (its own
    /// invocations excuse the ping), a close when the server said nothing for 30 s.
    static let serverTimeoutRules = ["stale.ping-missing", "stale.close-missing", "stale.close-code", "backoff.bound"]

    /// The hub's messages at `hub` (SignalR's hub pings every 15 s) and the client's pings
    /// at `pings`, appended in time order (a capture's records are).
    static func traffic(_ wire: inout Wire, _ conn: ConnectionID, hub: [Double], pings: [Double]) {
        let frames = hub.map { ($0, Side.server) } + pings.map { ($0, Side.client) }
        for (t, side) in frames.sorted(by: { $0.0 < $1.0 }) {
            if side == .server { wire.server(conn, at: t, #"{"event":"news","channel":"public","data":"{}"}"#) } else { wire.ping(conn, at: t) }
        }
    }

    @Test func keepAlive() throws {
        let spec = try PolicyExampleTests.spec(backoff: "full", stale: "server-timeout", rules: Self.serverTimeoutRules)
        // Pings every 15 s when it sent nothing else; the invocation at 10 s moves the next
        // ping to 25 s.
        var pinging = Wire()
        let a = pinging.connect(at: 0)
        pinging.client(a, at: 10, #"{"event":"client-move","channel":"public","data":"{}"}"#)
        Self.traffic(&pinging, a, hub: [15, 30, 45, 60, 75, 90], pings: [25, 40, 55, 70, 85])
        #expect(try analyze(pinging, spec: spec, end: 95).findings.isEmpty)

        // A client that sends nothing for 20 s after its last message.
        var quiet = Wire()
        let b = quiet.connect(at: 0)
        Self.traffic(&quiet, b, hub: [15, 30, 45], pings: [15, 35])
        let late = try analyze(quiet, spec: spec, end: 45)
        #expect(late.rules() == ["stale.ping-missing"])
        #expect(late.findings.first?.message == "no message from the client within 15.25 s of its last one at 15.00 s (keep-alive interval 15.00 s + tolerance)")

        // The WebSocket's own pings are the transport's: they keep no hub alive.
        var framePings = Wire()
        let c = framePings.connect(at: 0)
        for t in [10.0, 15, 20, 30] {
            if t == 15 || t == 30 { framePings.server(c, at: t, #"{"event":"news","channel":"public","data":"{}"}"#) } else { framePings.control(c, at: t, from: .client, .ping) }
        }
        #expect(try analyze(framePings, spec: spec, end: 40).rules() == ["stale.ping-missing"])
    }

    @Test func serverTimeout() throws {
        let spec = try PolicyExampleTests.spec(backoff: "full", stale: "server-timeout", rules: Self.serverTimeoutRules)
        // The hub falls silent after its message at 15 s; the client, pinging on, gives up
        // 30 s later with 1000 and reconnects: a stale close, so the retry is judged (and
        // comes in time), not the app's disconnect().
        var timedOut = Wire()
        let a = timedOut.connect(at: 0)
        timedOut.server(a, at: 15, #"{"event":"news","channel":"public","data":"{}"}"#)
        for t in [15.0, 30, 45] { timedOut.ping(a, at: t) }
        timedOut.close(a, at: 45.1, from: .client, code: 1000)
        timedOut.connect(at: 45.5)
        let gaveUp = try analyze(timedOut, spec: spec, end: 50)
        #expect(gaveUp.findings.isEmpty)
        #expect(!gaveUp.transitions.contains { $0.to == "disconnected" })

        // The same silence, the client still open past 30.25 s: and its closing with 1001
        // afterwards is a stale close with the wrong code.
        var kept = Wire()
        let b = kept.connect(at: 0)
        kept.server(b, at: 15, #"{"event":"news","channel":"public","data":"{}"}"#)
        for t in [15.0, 30, 45] { kept.ping(b, at: t) }
        let open = try analyze(kept, spec: spec, end: 50)
        #expect(open.rules() == ["stale.close-missing"])
        #expect(open.findings.first?.message == "no message from the server for 30.00 s after the last one and the connection still open > bound 30.25 s (server timeout 30.00 s + tolerance)")
        kept.close(b, at: 50, from: .client, code: 1001)
        #expect(try analyze(kept, spec: spec, end: 51).rules() == ["stale.close-missing", "stale.close-code"])

        // WebSocket pongs answering the client's WebSocket pings feed no server timeout.
        var pongs = Wire()
        let c = pongs.connect(at: 0)
        for t in [10.0, 20, 30] {
            pongs.ping(c, at: t)
            pongs.control(c, at: t, from: .client, .ping)
            pongs.control(c, at: t + 0.01, from: .server, .pong)
        }
        #expect(try analyze(pongs, spec: spec, end: 35).rules() == ["stale.close-missing"])

        // A close with 1000 while the hub still talks is the app's disconnect(): no retry owed.
        var leaving = Wire()
        let d = leaving.connect(at: 0)
        leaving.server(d, at: 15, #"{"event":"news","channel":"public","data":"{}"}"#)
        leaving.ping(d, at: 15)
        leaving.close(d, at: 20, from: .client, code: 1000)
        leaving.connect(at: 40)
        try Self.expectAppDisconnect(leaving, spec: spec, end: 41)
    }

    /// The hub answers no ping: the rules that await an answer are refused with this model.
    @Test func serverTimeoutRefusesPongRules() throws {
        for rule in ["server.pong-missing", "stale.premature-close"] {
            #expect(throws: SpecError.self) {
                try PolicyExampleTests.spec(backoff: "full", stale: "server-timeout", rules: ["stale.ping-missing", rule])
            }
        }
    }

    /// With `handshakeOverrides`, the open packet's ping interval and timeout replace the spec's.
    @Test func serverPingScheduleFromTheOpenPacket() throws {
        var spec = try Self.spec("server-ping")
        spec.connectedOn = .upgrade
        var driver = Driver(spec: spec)
        driver.connect(1, at: 0)
        driver.frame(1, at: 0.01, from: .server, .connectionEstablished,
                     liveness: AnnouncedLiveness(pingInterval: 5, pingTimeout: 3))
        let out = driver.finish(at: 20)
        #expect(out.rules() == ["stale.close-missing"])
        #expect(out.findings.first?.message.contains("(ping interval 5.00 s + ping timeout 3.00 s + tolerance)") == true)
    }
}

/// Drives one client's timeline with hand-made events, for what Bird's wire cannot carry.
struct Driver {
    var timeline: ClientTimeline
    var events: [AnalysisEvent] = []

    init(spec: LifecycleSpec) {
        timeline = ClientTimeline(info: ClientInfo(id: "client-1", key: "test", firstSeen: 0), spec: spec,
                                  plan: RulePlan(spec: spec, shortcuts: true), appSecret: nil)
        timeline.start(into: &events)
    }

    mutating func connect(_ conn: ConnectionID, at t: Double) {
        let start = Wire.us(t)
        timeline.open(OpenRecord(conn: conn, t: start, client: "10.0.0.1:4000\(conn)", server: "127.0.0.1:8080"), into: &events)
        timeline.upgrade(UpgradeRecord(conn: conn, t: start + 2000, from: .server, status: 101, headers: []), into: &events)
    }

    mutating func frame(_ conn: ConnectionID, at t: Double, from side: Side, _ kind: RealtimeEventKind,
                        ref: String? = nil, liveness: AnnouncedLiveness? = nil) {
        var event = RealtimeEvent(name: kind.rawValue, channel: "phoenix", data: nil, rawData: nil, kind: kind)
        event.ref = ref
        event.liveness = liveness
        let record = FrameRecord(conn: conn, t: Wire.us(t), from: side, opcode: .text, masked: side == .client,
                                 payload: Array(#"{"event":"\#(kind.rawValue)"}"#.utf8))
        timeline.frame(record, event: event, into: &events)
    }

    mutating func finish(at t: Double) -> Outcome {
        timeline.advance(to: Wire.us(t), into: &events)
        timeline.finish(at: Wire.us(t), into: &events)
        return Outcome(events: events)
    }
}
