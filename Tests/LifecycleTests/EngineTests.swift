import Testing
import Capture
import WebSocket
@testable import Lifecycle

@Suite struct EngineTests {
    @Test func birdTransitionsFollowTheTable() throws {
        var wire = Wire()
        let a = wire.connect(at: 0)
        wire.close(a, at: 5, from: .server, code: 4200)
        let b = wire.connect(at: 5.1)
        wire.end(b, at: 10)
        let c = wire.connect(at: 10.5)
        wire.close(c, at: 20, from: .client, code: 1000)
        let d = wire.connect(at: 30)
        wire.close(d, at: 40, from: .server, code: 4009)
        let out = try analyze(wire, end: 50)
        #expect(out.transitions.map(\.to) == [
            "initialized", "connecting", "connected", "connecting", "connected", "unavailable", "connecting",
            "connected", "disconnected", "connecting", "connected", "failed",
        ])
        #expect(out.findings.isEmpty)
        #expect(out.transitions[5].cause == "RST from server")
    }

    @Test func sequentialConnectionsChainAndOverlappingOnesAreDifferentClients() throws {
        var wire = Wire()
        let a = wire.connect(at: 0)
        let b = wire.connect(at: 1)  // same key, overlaps a
        wire.end(a, at: 5)
        wire.connect(at: 5.5)  // chains to a's client (b is still open)
        wire.end(b, at: 20)
        let out = try analyze(wire, end: 30)
        #expect(out.clients.map(\.id) == ["client-1", "client-2"])
        let assigned = out.events.compactMap { if case .connection(let c, let client) = $0 { "\(c)=\(client)" } else { nil } }
        #expect(assigned == ["1=client-1", "2=client-2", "3=client-1"])
        #expect(out.clients.first?.key == "10.0.0.1 | sim/1.0 | /app/key?protocol=7&client=js&version=1.0")
    }

    @Test func differentAgentsAreDifferentClients() throws {
        var wire = Wire()
        let a = wire.connect(at: 0, agent: "one")
        wire.end(a, at: 1)
        wire.connect(at: 2, agent: "two")
        #expect(try analyze(wire, end: 3).clients.count == 2)
    }

    @Test func headerKeyOverridesTheDefault() throws {
        var wire = Wire()
        let a = wire.connect(at: 0, ip: "10.0.0.1")
        wire.end(a, at: 1)
        wire.connect(at: 1.5, ip: "10.0.0.9")
        #expect(try analyze(wire, end: 3).clients.count == 2)
        let out = try analyze(wire, key: .header("User-Agent"), end: 3)
        #expect(out.clients.count == 1)
        #expect(out.clients.first?.key == "User-Agent=sim/1.0")
    }

    @Test func clientKeyParsing() {
        #expect(ClientKeyMode(parsing: "header:X-Client") == .header("X-Client"))
        #expect(ClientKeyMode(parsing: "query:client") == .query("client"))
        #expect(ClientKeyMode(parsing: "cookie:x") == nil)
        #expect(ClientKeyMode(parsing: "header:") == nil)
        #expect(ClientKeyMode.stableTarget("/app/k?protocol=7&t=123&token=x") == "/app/k?protocol=7")
        #expect(ClientKeyMode.host(of: "[::1]:5000") == "::1")
        #expect(ClientKeyMode.host(of: "10.0.5.125:49622") == "10.0.5.125")
        #expect(ClientKeyMode.host(of: "::1") == "::1")  // two colons and no brackets: no port to cut
        #expect(ClientKeyMode.host(of: "unix") == "unix")
        // Beyond ASCII, by characters: a colon followed by a combining mark is no colon.
        #expect(ClientKeyMode.host(of: "h\u{F4}st:1") == "h\u{F4}st")
        #expect(ClientKeyMode.host(of: "a:\u{301}1") == "a:\u{301}1")
    }

    /// Header lookup by name ignores case: ASCII names byte by byte, others by their
    /// Unicode lowercase (as it always was).
    @Test func headerLookupIgnoresCase() {
        let request = UpgradeRecord(conn: 1, t: 0, from: .client, method: "GET", target: "/",
                                    headers: [HeaderField("user-AGENT", "sim/1.0"), HeaderField("X-\u{212A}ey", "kelvin")])
        #expect(request.header("User-Agent") == "sim/1.0")
        #expect(request.header("USER-AGENT") == "sim/1.0")
        #expect(request.header("User-Agen") == nil)
        #expect(request.header("x-key") == "kelvin")  // the Kelvin sign lowercases to k
        #expect(request.header("Host") == nil)
    }

    @Test func openConnectionsEndWithTheCapture() throws {
        var wire = Wire()
        wire.connect(at: 0)
        let out = try analyze(wire, end: 3)
        let ended = out.events.compactMap { if case .connectionEnded(let s) = $0 { s } else { nil } }
        #expect(ended.count == 1)
        #expect(ended.first?.end == "capture end")
        #expect(ended.first?.connectedAt == Wire.us(0.01))
    }

    /// The proxy closes its sockets right after a close handshake, so no TCP end may follow:
    /// the connection still ends there, not at the end of the capture.
    @Test func aCloseHandshakeEndsTheConnectionWithoutATCPEnd() throws {
        var wire = Wire()
        let a = wire.connect(at: 0)
        let close: [UInt8] = [0x0F, 0xA9]  // 4009
        wire.records.append(.frame(FrameRecord(conn: a, t: Wire.us(2), from: .server, opcode: .close, masked: false,
                                               payload: close, action: .injected, fault: "close:4009")))
        wire.records.append(.frame(FrameRecord(conn: a, t: Wire.us(2.001), from: .client, opcode: .close, masked: true,
                                               payload: close, action: .dropped, fault: "close:4009")))
        let out = try analyze(wire, end: 30)
        let ended = out.events.compactMap { if case .connectionEnded(let s) = $0 { s } else { nil } }
        #expect(ended.count == 1)
        #expect(ended.first?.endedAt == Wire.us(2.001))
        #expect(ended.first?.closeCode == 4009)
    }

    @Test func prefixIsDetectedFromThePusherHandshake() throws {
        var wire = Wire()
        let conn = 1
        wire.records.append(.open(OpenRecord(conn: conn, t: 0, client: "1.2.3.4:1", server: "s")))
        wire.server(conn, at: 0.01, #"{"event":"pusher:connection_established","data":"{\"socket_id\":\"1.1\"}"}"#)
        let spec = try SpecLoader.load("bird")
        var analyzer = LiveAnalyzer(options: AnalyzerOptions(spec: spec))
        var events: [AnalysisEvent] = []
        for r in wire.records { events += analyzer.feed(r) }
        #expect(analyzer.prefix == "pusher")
        #expect(events.contains { if case .transition(let t) = $0 { t.to == "connected" } else { false } })
    }
}

@Suite struct EngineMemoryTests {
    @Test func framesAfterBothEndsDoNotMakeANewClient() throws {
        var wire = Wire()
        let a = wire.connect(at: 0)
        wire.close(a, at: 5, from: .client, code: 1000)  // both FINs follow
        wire.text(a, at: 6, from: .server, #"{"event":"late","data":{}}"#)
        let out = try analyze(wire, end: 7)
        #expect(out.clients.count == 1)
        #expect(out.findings.isEmpty)
    }
}

@Suite struct LiveClockTests {
    /// A live proxy with no traffic drives timers with `advance(to:)` from its own clock value.
    @Test func advanceFiresTimerChecksWithoutRecords() throws {
        var wire = Wire()
        wire.connect(at: 0, activityTimeout: 60)
        var analyzer = LiveAnalyzer(options: AnalyzerOptions(spec: try SpecLoader.load("bird")))
        for r in wire.records { _ = analyzer.feed(r) }
        #expect(analyzer.advance(to: Wire.us(59)).isEmpty)
        let events = analyzer.advance(to: Wire.us(61))
        #expect(events.contains { if case .finding(let f) = $0 { f.rule == "stale.ping-missing" } else { false } })
        #expect(analyzer.advance(to: Wire.us(62)).isEmpty)  // reported once
    }

    /// Issue 17 item 9: a client that speaks no Bird events, analyzed with the default spec,
    /// is connected on its 101 and analyzed at connection level: its app's own 4001 close
    /// and reconnect are no `failed.retried`, and the analyzer says what it did.
    @Test func aClientWithoutProtocolEventsIsAnalyzedAtConnectionLevel() throws {
        var wire = Wire()
        let a = wire.connect(at: 0, handshake: false)
        wire.server(a, at: 0.01, "hello")
        wire.client(a, at: 0.02, "hi")
        wire.close(a, at: 5, from: .server, code: 4001)
        wire.connect(at: 5.5, handshake: false)
        let spec = try SpecLoader.load("bird")
        var analyzer = LiveAnalyzer(options: AnalyzerOptions(spec: spec))
        var events: [AnalysisEvent] = []
        for record in wire.records { events += analyzer.feed(record) }
        events += analyzer.finish(at: Wire.us(10))
        let out = Outcome(events: events)
        #expect(out.findings.isEmpty, "\(out.rules())")
        let connected = try #require(out.transitions.first { $0.to == "connected" })
        #expect(connected.t == Wire.us(0) + 2000 && connected.cause.contains("connection level"))
        #expect(analyzer.notes == ["client-1: no bird events seen; analyzed at connection level"])
    }

    @Test func aBirdClientStaysOnTheBirdSpec() throws {
        var wire = Wire()
        let a = wire.connect(at: 0)
        wire.server(a, at: 0.5, "plain text after the handshake")
        var analyzer = LiveAnalyzer(options: AnalyzerOptions(spec: try SpecLoader.load("bird")))
        for record in wire.records { _ = analyzer.feed(record) }
        _ = analyzer.finish(at: Wire.us(2))
        #expect(analyzer.notes.isEmpty)
    }
}
