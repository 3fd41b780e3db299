import Capture
import ProtocolTable
import Protocols
import Testing
@testable import Faults
import Vocabulary

/// The faults act on Socket.IO's messages through the event kind the table's `socketio`
/// entry decodes, with no Socket.IO name anywhere in the faults.
@Suite struct SocketIOFaultTests {
    static var entry: any WireProtocol { ProtocolTable.standard.entry(for: "socketio") }

    static func frame(_ text: String, from side: Side) -> FaultFrame {
        var wire = entry
        let payload = Array(text.utf8)
        return FaultFrame(from: side, opcode: .text, payload: payload, event: wire.decode(payload))
    }

    static let open = #"0{"sid":"abc","upgrades":[],"pingTimeout":500,"pingInterval":1000,"maxPayload":1000000}"#

    func apply(_ fault: inout some Fault, _ event: FaultEvent) -> FaultVerdict {
        var context = FaultContext(now: 0, random: SeededGenerator(seed: 1), wire: Self.entry)
        return fault.apply(event, context: &context)
    }

    @Test func stallPingsSwallowsEngineIOPingsOnly() throws {
        var fault = try StallPings(Make.rule("stall-pings"))
        _ = apply(&fault, .armed)
        #expect(apply(&fault, .frame(Self.frame("2", from: .server))).frame == .drop)
        #expect(apply(&fault, .frame(Self.frame("3", from: .client))).frame == .pass)
        #expect(apply(&fault, .frame(Self.frame(#"42["tick",{}]"#, from: .server))).frame == .pass)
    }

    @Test func messageKindsPickTheNamespaceAnswerAndPongs() throws {
        var drop = try DropMessage(Make.rule("drop-message,kind=subscription_succeeded,dir=s2c"))
        _ = apply(&drop, .armed)
        #expect(apply(&drop, .frame(Self.frame(#"40{"sid":"z9"}"#, from: .server))).frame == .drop)
        #expect(apply(&drop, .frame(Self.frame("40", from: .client))).frame == .pass)
        var delay = try DelayMessage(Make.rule("delay-message:1s,kind=pong,dir=c2s"))
        _ = apply(&delay, .armed)
        #expect(apply(&delay, .frame(Self.frame("3", from: .client))).frame == .delay(1_000_000))
        var named = try DropMessage(Make.rule("drop-message,event=chat,channel=/admin"))
        _ = apply(&named, .armed)
        #expect(apply(&named, .frame(Self.frame(#"42/admin,["chat","hi"]"#, from: .client))).frame == .drop)
        #expect(apply(&named, .frame(Self.frame(#"42["chat","hi"]"#, from: .client))).frame == .pass)
    }

    @Test func handshakeFaultsRewriteTheOpenPacket() throws {
        var strip = try StripSocketID(Make.rule("strip-socket-id"))
        _ = apply(&strip, .armed)
        let verdict = apply(&strip, .frame(Self.frame(Self.open, from: .server)))
        #expect(verdict.report == "removed socket_id abc from the handshake")
        #expect(verdict.frame == .rewrite(Array(#"0{"upgrades":[],"pingTimeout":500,"pingInterval":1000,"maxPayload":1000000}"#.utf8)))
    }

    @Test func onKindStartsARuleAfterTheNamespaceAnswer() {
        var (faults, _) = Make.connection(["close:4000,on-kind=subscription_succeeded"])
        #expect(faults.frameSeen(event: Self.frame(Self.open, from: .server).event, now: 1).isEmpty)
        #expect(faults.frameSeen(event: Self.frame(#"40{"sid":"z9"}"#, from: .server).event, now: 2).count == 1)
    }
}
