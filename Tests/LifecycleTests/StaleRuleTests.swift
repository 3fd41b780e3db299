import Testing
import Capture
@testable import Lifecycle

@Suite struct StaleRuleTests {
    @Test func silenceWithoutPingIsReported() throws {
        var wire = Wire()
        wire.connect(at: 0, activityTimeout: 60)
        let out = try analyze(wire, end: 100)
        let f = try #require(out.findings("stale.ping-missing").first)
        #expect(f.message.contains("> bound 60.25 s (activity timeout 60.00 s + tolerance)"))
        #expect(f.t == Wire.us(60.26))
        #expect(out.findings.count == 1)
    }

    @Test func handshakeTimeoutDefaultsTo120() throws {
        var wire = Wire()
        wire.connect(at: 0)
        #expect(try analyze(wire, end: 100).findings.isEmpty)
        #expect(try analyze(wire, end: 121).rules() == ["stale.ping-missing"])
    }

    @Test func latePingIsReportedWhenItArrives() throws {
        var wire = Wire()
        let a = wire.connect(at: 0, activityTimeout: 60)
        wire.ping(a, at: 70)
        wire.pong(a, at: 70.1)
        let out = try analyze(wire, end: 80)
        // Judged when the late ping's record arrives, before the ping itself is taken in.
        #expect(out.findings("stale.ping-missing").first?.message.hasPrefix("silent for 69.99 s without a ping") == true)
        #expect(out.findings.count == 1)
    }

    @Test func pingAnsweredInTimeIsClean() throws {
        var wire = Wire()
        let a = wire.connect(at: 0, activityTimeout: 60)
        wire.ping(a, at: 60.1)
        wire.pong(a, at: 60.2)
        #expect(try analyze(wire, end: 100).findings.isEmpty)
    }

    @Test func unansweredPingWithoutCloseIsReported() throws {
        var wire = Wire()
        let a = wire.connect(at: 0, activityTimeout: 60)
        wire.ping(a, at: 60.1)
        let out = try analyze(wire, end: 100)
        #expect(Set(out.rules()) == ["stale.close-missing", "server.pong-missing"])
        #expect(out.findings("stale.close-missing").first?.t == Wire.us(90.35))
        #expect(out.findings("server.pong-missing").first?.severity == .warning)
    }

    @Test func staleCloseWithRetryCodeIsClean() throws {
        var wire = Wire()
        let a = wire.connect(at: 0, activityTimeout: 60)
        wire.ping(a, at: 60.1)
        wire.close(a, at: 90.2, from: .client, code: 4201)
        wire.connect(at: 90.4)
        let out = try analyze(wire, end: 100)
        // Only the server's silence is left, as a warning.
        #expect(out.rules() == ["server.pong-missing"])
    }

    @Test func staleCloseWithWrongCodeIsReported() throws {
        var wire = Wire()
        let a = wire.connect(at: 0, activityTimeout: 60)
        wire.ping(a, at: 60.1)
        wire.close(a, at: 90.2, from: .client, code: 1000)
        let out = try analyze(wire, end: 100)
        #expect(out.findings("stale.close-code").first?.message == "stale close used code 1000, expected 4200-4299")
    }

    /// Issue 17 item 7: a client whose heartbeat ends the transport (FIN or RST, no close
    /// frame) after an unanswered ping made a stale close without a code, on both sides of
    /// the old boundary (pong timeout + tolerance = 90.35 s here). Before, the earlier end
    /// got no finding at all and the later one only `stale.close-missing`.
    @Test(arguments: [(90.34, EndKind.fin), (90.36, EndKind.fin), (90.34, EndKind.rst), (90.36, EndKind.rst)])
    func anEndWithoutCloseFrameAfterAnUnansweredPingIsAStaleCloseWithoutCode(at t: Double, kind: EndKind) throws {
        var wire = Wire()
        let a = wire.connect(at: 0, activityTimeout: 60)
        wire.ping(a, at: 60.1)
        wire.end(a, at: t, side: .client, kind: kind)
        wire.end(a, at: t + 0.001, side: .server, kind: .fin)
        wire.connect(at: t + 1)
        let out = try analyze(wire, end: t + 2)
        let f = try #require(out.findings("stale.close-code").first, "\(out.rules())")
        #expect(out.findings("stale.close-code").count == 1)
        #expect(f.message.hasPrefix("stale close: ended the connection (\(kind.rawValue.uppercased()) from client) without a close frame"))
        #expect(f.message.hasSuffix("after an unanswered ping, expected a close frame with 4200-4299"))
        #expect(f.evidence.map(\.summary) == ["text bird:ping", "\(kind.rawValue.uppercased()) from client"])
        #expect(f.t == Wire.us(t))
        // Late by 10 ms: the lateness is reported too; in time: nothing else about the client.
        #expect(out.findings("stale.close-missing").count == (t > 90.35 ? 1 : 0))
    }

    @Test func anEndWithoutCloseFrameLongBeforeThePongTimeoutIsNotAStaleClose() throws {
        var wire = Wire()
        let a = wire.connect(at: 0, activityTimeout: 60)
        wire.ping(a, at: 60.1)
        wire.end(a, at: 61, side: .client, kind: .fin)
        let out = try analyze(wire, end: 62)
        #expect(out.findings("stale.close-code").isEmpty)
    }

    @Test func anEndWithoutCloseFrameAfterAnAnsweredPingIsNotAStaleClose() throws {
        var wire = Wire()
        let a = wire.connect(at: 0, activityTimeout: 60)
        wire.ping(a, at: 60.1)
        wire.pong(a, at: 60.2)
        wire.end(a, at: 90.3, side: .client, kind: .fin)
        let out = try analyze(wire, end: 91)
        #expect(out.findings("stale.close-code").isEmpty)
    }

    @Test func retryCloseDespiteAnAnswerIsPremature() throws {
        var wire = Wire()
        let a = wire.connect(at: 0, activityTimeout: 60)
        wire.ping(a, at: 60.1)
        wire.pong(a, at: 60.2)
        wire.close(a, at: 61, from: .client, code: 4201)
        wire.connect(at: 61.1)
        let out = try analyze(wire, end: 70)
        let f = try #require(out.findings("stale.premature-close").first)
        #expect(f.severity == .warning)
        #expect(f.message.contains("although the server sent a frame 0.10 s after the ping"))
        #expect(out.findings.count == 1)
    }

    @Test func retryCloseBeforePongTimeoutIsPremature() throws {
        var wire = Wire()
        let a = wire.connect(at: 0, activityTimeout: 60)
        wire.ping(a, at: 60.1)
        wire.close(a, at: 70.1, from: .client, code: 4201)
        let out = try analyze(wire, end: 71)
        #expect(out.findings("stale.premature-close").first?.message == "closed with 4201 10.00 s after the ping < pong timeout 30.00 s")
    }

    @Test func pongSwallowedByFaultIsAttributed() throws {
        var wire = Wire()
        let a = wire.connect(at: 0, activityTimeout: 60)
        wire.ping(a, at: 60.1)
        wire.pong(a, at: 60.2, action: .dropped, fault: "stall-pongs")
        wire.close(a, at: 90.2, from: .client, code: 4201)
        wire.connect(at: 90.3)
        let out = try analyze(wire, end: 95)
        let f = try #require(out.findings("server.pong-missing").first)
        #expect(f.causedByFault == "stall-pongs")
        #expect(f.party == .server)
        #expect(out.findings.count == 1)
    }

    @Test func timersRunOnOtherClientsRecordsNotOnlyAtFinish() throws {
        var wire = Wire()
        wire.connect(at: 0, activityTimeout: 60)
        let b = wire.connect(at: 1, ip: "10.0.0.2")
        wire.keepAlive(b, from: 1, to: 200)
        let spec = try SpecLoader.load("bird")
        var analyzer = LiveAnalyzer(options: AnalyzerOptions(spec: spec))
        var live: [AnalysisEvent] = []
        for record in wire.records { live += analyzer.feed(record) }
        let found = live.contains { if case .finding(let f) = $0 { f.rule == "stale.ping-missing" && f.client == "client-1" } else { false } }
        #expect(found)
    }
}
