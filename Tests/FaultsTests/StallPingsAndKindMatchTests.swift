import Capture
import Testing
@testable import Faults
import Vocabulary

/// `stall-pings` (the server's pings swallowed, for clients that wait on them) and the
/// `kind=` match of the message-level kinds: both go by the decoded event's kind, so they
/// act on every protocol's spelling of a ping or a confirmation.
@Suite struct StallPingsAndKindMatchTests {
    func on(_ fault: inout some Fault, _ frame: FaultFrame) -> FaultVerdict {
        var context = Make.context()
        return fault.apply(.frame(frame), context: &context)
    }

    func arm(_ fault: inout some Fault) -> FaultVerdict {
        var context = Make.context()
        return fault.apply(.armed, context: &context)
    }

    @Test func stallPingsSwallowsTheServersPingEventsAndFramesOnly() throws {
        var fault = try StallPings(Make.rule("stall-pings,for=5s"))
        // Nothing is swallowed before the fault arms.
        #expect(on(&fault, Make.event("bird:ping", from: .server)).frame == .pass)
        let armed = arm(&fault)
        #expect(armed.report == "swallowing the server's pings for 5s")
        #expect(armed.target == .client)
        #expect(on(&fault, Make.event("bird:ping", from: .server)).frame == .drop)
        #expect(on(&fault, FaultFrame(from: .server, opcode: .ping, payload: [])).frame == .drop)
        #expect(on(&fault, Make.event("bird:pong", from: .server)).frame == .pass)
        #expect(on(&fault, Make.event("news", from: .server)).frame == .pass)
        // The client's pings still reach the server (the default is s2c).
        #expect(on(&fault, Make.event("bird:ping", from: .client)).frame == .pass)
        #expect(on(&fault, FaultFrame(from: .client, opcode: .ping, payload: [])).frame == .pass)
        var context = Make.context()
        #expect(fault.apply(.expired, context: &context).report == "pings flow again")
        #expect(on(&fault, Make.event("bird:ping", from: .server)).frame == .pass)
    }

    @Test func stallPingsDirectionChoosesWhosePings() throws {
        var fault = try StallPings(Make.rule("stall-pings,dir=c2s"))
        #expect(arm(&fault).report == "swallowing the client's pings")
        #expect(on(&fault, Make.event("bird:ping", from: .client)).frame == .drop)
        #expect(on(&fault, Make.event("bird:ping", from: .server)).frame == .pass)
        #expect(fault.needsWholeFrame(from: .client, opcode: .ping))
        #expect(!fault.needsWholeFrame(from: .server, opcode: .text))
        #expect(throws: FaultRuleError.self) { try FaultRule.parse("stall-pings,dir=up") }
        #expect(throws: FaultRuleError.self) { try FaultRule.parse("stall-pings:3") }
        #expect(FaultRegistry.kind(named: "stall-pings") != nil)
    }

    @Test func kindMatchPicksEventsByMeaningNotName() throws {
        var drop = try DropMessage(Make.rule("drop-message,kind=subscription_succeeded,dir=s2c"))
        #expect(arm(&drop).report == "dropping subscription_succeeded messages from the server")
        #expect(on(&drop, Make.event("bird_internal:subscription_succeeded", from: .server)).frame == .drop)
        #expect(on(&drop, Make.event("acme_internal:subscription_succeeded", from: .server, dialect: "acme")).frame == .drop)
        #expect(on(&drop, Make.event("bird:pong", from: .server)).frame == .pass)
        // An undecoded message has no kind, so it never matches.
        #expect(on(&drop, FaultFrame(from: .server, opcode: .binary, payload: [1])).frame == .pass)

        var delay = try DelayMessage(Make.rule("delay-message:1s,kind=pong"))
        _ = arm(&delay)
        #expect(on(&delay, Make.event("bird:pong", from: .server)).frame == .delay(1_000_000))
        #expect(on(&delay, Make.event("bird:ping", from: .server)).frame == .pass)

        var both = try DropMessage(Make.rule("drop-message,event=bird:pong,kind=pong"))
        #expect(arm(&both).report == "dropping bird:pong messages of kind pong")
    }

    @Test func anUnknownKindIsAClearError() {
        #expect {
            try FaultRule.parse("drop-message,kind=pongs").makeFault()
        } throws: { error in
            "\(error)".contains("kind= must be an event kind") && "\(error)".contains("subscription_succeeded")
        }
    }
}
