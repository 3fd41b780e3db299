import Testing
import Capture
@testable import Lifecycle

@Suite struct HandshakeRuleTests {
    @Test func missingSocketIDIsServerErrorAndClientMustClose() throws {
        var wire = Wire()
        wire.connect(at: 0, missingID: true)
        let out = try analyze(wire, end: 5)
        #expect(Set(out.rules()) == ["server.handshake-missing-id", "handshake.missing-id"])
        #expect(out.findings("server.handshake-missing-id").first?.party == .server)
        #expect(out.findings("handshake.missing-id").first?.message.contains("> bound 0.50 s") == true)
        #expect(!out.transitions.map(\.to).contains("connected"))
    }

    /// Issue 17 item 8: the handshake a fault stripped is the fault's doing (caused by it);
    /// the client keeping the socket open after it is the client's own (after it).
    @Test func aStrippedHandshakeIsCausedByTheFaultAndTheClientsReactionComesAfterIt() throws {
        var wire = Wire()
        let a = wire.connect(at: 0, handshake: false)
        wire.fault(a, at: 0.01, rule: "strip-socket-id", kind: "strip-socket-id")
        wire.server(a, at: 0.01, #"{"event":"bird:connection_established","data":"{}"}"#,
                    action: .injected, fault: "strip-socket-id")
        let out = try analyze(wire, end: 5)
        let server = try #require(out.findings("server.handshake-missing-id").first)
        #expect(server.causedByFault == "strip-socket-id" && server.afterFault == nil)
        let client = try #require(out.findings("handshake.missing-id").first)
        #expect(client.causedByFault == nil && client.afterFault == "strip-socket-id")
        #expect(client.faultNote == "after injected fault strip-socket-id")
    }

    @Test func closingAtOnceAfterMissingIDIsClean() throws {
        var wire = Wire()
        let a = wire.connect(at: 0, missingID: true)
        wire.close(a, at: 0.2, from: .client, code: 4200)
        let out = try analyze(wire, end: 5)
        #expect(out.rules() == ["server.handshake-missing-id"])
    }

    @Test func sendingAfterMissingIDIsReported() throws {
        var wire = Wire()
        let a = wire.connect(at: 0, missingID: true)
        wire.ping(a, at: 0.1)
        wire.close(a, at: 0.2, from: .client, code: 4200)
        let out = try analyze(wire, end: 5)
        #expect(out.findings("handshake.missing-id").first?.message.hasPrefix("sent bird:ping 0.09 s after a handshake without socket_id") == true)
    }

    /// A handshake without socket_id still is the handshake: a subscribe after it breaks
    /// handshake.missing-id, and is not reported twice as early.
    @Test func subscribeAfterAHandshakeWithoutIDIsNotEarly() throws {
        var wire = Wire()
        let a = wire.connect(at: 0, missingID: true)
        wire.subscribe(a, at: 0.1, "news")
        wire.close(a, at: 0.2, from: .client, code: 4200)
        let out = try analyze(wire, end: 5)
        #expect(Set(out.rules()) == ["server.handshake-missing-id", "handshake.missing-id"])
    }

    @Test func subscribeBeforeHandshakeIsReported() throws {
        var wire = Wire()
        let a = wire.connect(at: 0, handshake: false)
        wire.subscribe(a, at: 0.005, "news")
        wire.handshake(a, at: 0.01)
        let out = try analyze(wire, end: 5)
        #expect(out.rules() == ["handshake.early-subscribe"])
        #expect(out.findings.first?.message.hasPrefix("sent bird:subscribe news") == true)
    }

    @Test func subscribeAfterHandshakeIsClean() throws {
        var wire = Wire()
        let a = wire.connect(at: 0)
        wire.subscribe(a, at: 0.05, "news")
        wire.subscribed(a, at: 0.06, "news")
        #expect(try analyze(wire, end: 5).findings.isEmpty)
    }
}
