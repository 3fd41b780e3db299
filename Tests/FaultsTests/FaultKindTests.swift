import Capture
import JSON
import Testing
@testable import Faults

/// Each kind on its own: the verdicts it gives for the events it is shown.
@Suite struct FaultKindTests {
    @Test func stallPongsSwallowsServerPongsOnlyAndEndsAfterFor() throws {
        var fault = try StallPongs(Make.rule("stall-pongs,for=5s"))
        var context = Make.context(1_000_000)
        let armed = fault.apply(.armed, context: &context)
        #expect(armed.report == "swallowing the server's pongs for 5s")
        #expect(fault.apply(.frame(Make.event("bird:pong", from: .server)), context: &context).dropped)
        #expect(fault.apply(.frame(Make.event("pusher:pong", from: .server)), context: &context).dropped)
        #expect(fault.apply(.frame(FaultFrame(from: .server, opcode: .pong, payload: [])), context: &context).dropped)
        #expect(!fault.apply(.frame(Make.event("bird:pong", from: .client)), context: &context).dropped)
        #expect(!fault.apply(.frame(Make.event("bird:ping", from: .server)), context: &context).dropped)
        // Pongs by kind: any prefix the connection speaks, and no other dialect's "pong".
        #expect(fault.apply(.frame(Make.event("acme:pong", from: .server)), context: &context).dropped)
        #expect(!fault.apply(.frame(Make.event("other:pong", from: .server, dialect: "bird")), context: &context).dropped)
        #expect(!fault.apply(.frame(Make.event("pong", from: .server)), context: &context).dropped)
        context.now = 6_000_000
        #expect(fault.apply(.expired, context: &context).report == "pongs flow again")
        #expect(!fault.apply(.frame(Make.event("bird:pong", from: .server)), context: &context).dropped)
    }

    @Test func closeSendsItsCodeToTheChosenSide() throws {
        var toClient = try CloseFault(Make.rule("close:4009,reason=terminated"))
        var context = Make.context()
        let verdict = toClient.apply(.armed, context: &context)
        #expect(verdict.effects == [.close(to: .client, code: 4009, reason: "terminated")])
        #expect(verdict.report == "sent close 4009 'terminated' to client, closed server")
        var toServer = try CloseFault(Make.rule("close:1001,to=server"))
        #expect(toServer.apply(.armed, context: &context).effects == [.close(to: .server, code: 1001, reason: "")])
        #expect(toServer.apply(.frame(Make.event("x", from: .client)), context: &context) == .pass)
    }

    @Test func closeReasonMustFitAControlFrame() {
        #expect(throws: FaultRuleError.self) {
            try FaultRule.parse("close:4000,reason=" + String(repeating: "x", count: 124))
        }
        #expect((try? FaultRule.parse("close:4000,reason=" + String(repeating: "x", count: 123))) != nil)
    }

    @Test func dropAndResetEndBothConnections() throws {
        var context = Make.context()
        var drop = try DropFault(Make.rule("drop"))
        #expect(drop.apply(.armed, context: &context).effects == [.drop])
        var reset = try ResetFault(Make.rule("reset"))
        #expect(reset.apply(.armed, context: &context).effects == [.reset])
    }

    @Test func blackholeDropsTheChosenDirectionForAWhile() throws {
        var fault = try Blackhole(Make.rule("blackhole,dir=s2c,for=2s"))
        var context = Make.context(10)
        let armed = fault.apply(.armed, context: &context)
        #expect(armed.report == "blackholing server to client for 2s")
        #expect(armed.target == .client)
        #expect(fault.apply(.frame(Make.event("a", from: .server)), context: &context).dropped)
        #expect(!fault.apply(.frame(Make.event("a", from: .client)), context: &context).dropped)
        #expect(fault.apply(.streamEnded(from: .server), context: &context).dropped)
        #expect(!fault.apply(.streamEnded(from: .client), context: &context).dropped)
        context.now = 2_000_010
        _ = fault.apply(.expired, context: &context)
        #expect(!fault.apply(.frame(Make.event("a", from: .server)), context: &context).dropped)

        #expect(fault.apply(.streamEnded(from: .server), context: &context) == .pass)   // over
        var both = try Blackhole(Make.rule("blackhole"))
        _ = both.apply(.armed, context: &context)
        #expect(both.apply(.frame(Make.event("a", from: .client)), context: &context).dropped)
        #expect(both.apply(.frame(Make.event("a", from: .server)), context: &context).dropped)
    }

    @Test func latencyDelaysWithinTheJitterAndRepeatsForASeed() throws {
        func delays(seed: UInt64) throws -> [Int64] {
            var fault = try Latency(Make.rule("latency:100ms,jitter=20ms,dir=c2s"))
            var context = Make.context(seed: seed)
            _ = fault.apply(.armed, context: &context)
            #expect(fault.apply(.frame(Make.event("a", from: .server)), context: &context) == .pass)
            return (0..<50).map { _ in
                guard case .delay(let d) = fault.apply(.frame(Make.event("a", from: .client)), context: &context).frame
                else { return -1 }
                return d
            }
        }
        let first = try delays(seed: 7)
        #expect(first.allSatisfy { (80_000...120_000).contains($0) })
        #expect(Set(first).count > 10)
        #expect(try delays(seed: 7) == first)
        #expect(try delays(seed: 8) != first)
    }

    @Test func refusalsActAtTheUpgradeOnly() throws {
        var context = Make.context()
        var refuse = try Refuse(Make.rule("refuse:4001,reason=no such app"))
        #expect(refuse.apply(.armed, context: &context) == .pass)
        #expect(refuse.apply(.upgrade, context: &context).effects == [.refuseUpgrade(code: 4001, reason: "no such app")])
        var http = try RefuseHTTP(Make.rule("refuse-http:503"))
        #expect(http.apply(.upgrade, context: &context).effects == [.refuseHTTP(status: 503)])
        #expect(throws: FaultRuleError.self) { try FaultRule.parse("refuse:1006") }
    }

    @Test func stripSocketIDRewritesTheHandshakeKeepingItDoubleEncoded() throws {
        var fault = try StripSocketID(Make.rule("strip-socket-id"))
        var context = Make.context()
        #expect(fault.apply(.frame(Make.event("bird:pong", from: .server)), context: &context) == .pass)
        let verdict = fault.apply(.frame(Make.handshake()), context: &context)
        guard case .rewrite(let payload) = verdict.frame else { Issue.record("not rewritten"); return }
        #expect(String(decoding: payload, as: UTF8.self)
                == #"{"event":"bird:connection_established","data":"{\"activity_timeout\":120}"}"#)
        #expect(verdict.report == "removed socket_id 1234.5678 from the handshake")
        #expect(fault.apply(.frame(Make.handshake()), context: &context) == .pass)   // once only
    }

    @Test func activityTimeoutRewritesTheHandshake() throws {
        var fault = try ActivityTimeout(Make.rule("activity-timeout:5"))
        var context = Make.context()
        let verdict = fault.apply(.frame(Make.handshake(prefix: "pusher")), context: &context)
        guard case .rewrite(let payload) = verdict.frame else { Issue.record("not rewritten"); return }
        let envelope = try JSONParser.parse(payload)
        let data = try JSONParser.parse(try #require(envelope["data"]?.stringValue))
        #expect(data["activity_timeout"] == .int(5))
        #expect(data["socket_id"] == .string("1234.5678"))
        #expect(verdict.report == "rewrote activity_timeout 120 -> 5")
    }

    @Test func handshakeFaultsFollowTheHandshakeKindUnderAnyPrefix() throws {
        var strip = try StripSocketID(Make.rule("strip-socket-id"))
        var context = Make.context()
        let verdict = strip.apply(.frame(Make.handshake(prefix: "acme")), context: &context)
        guard case .rewrite(let payload) = verdict.frame else { Issue.record("not rewritten"); return }
        #expect(String(decoding: payload, as: UTF8.self)
                == #"{"event":"acme:connection_established","data":"{\"activity_timeout\":120}"}"#)
        // The entry rewrites; a connection without one relays the handshake as it came.
        var timeout = try ActivityTimeout(Make.rule("activity-timeout:5"))
        var blind = Make.context()
        blind.wire = nil
        #expect(timeout.apply(.frame(Make.handshake(prefix: "acme")), context: &blind) == .pass)
    }

    @Test func rewritesLeaveCompressedHandshakesAlone() throws {
        var fault = try ActivityTimeout(Make.rule("activity-timeout:5"))
        var context = Make.context()
        var frame = Make.handshake()
        frame.compressed = true
        let verdict = fault.apply(.frame(frame), context: &context)
        #expect(verdict.frame == .pass)
        #expect(verdict.report?.contains("compressed") == true)
    }

    @Test func injectSendsItsJSONToTheChosenSide() throws {
        var fault = try Inject(Make.rule(#"inject:{"event":"bird:error","data":{"code":4009}},to=server"#))
        var context = Make.context()
        let verdict = fault.apply(.armed, context: &context)
        #expect(verdict.effects == [.inject(to: .server, payload: Array(#"{"event":"bird:error","data":{"code":4009}}"#.utf8))])
        #expect(verdict.report == "injected a text frame (bird:error) to server")
    }
}
