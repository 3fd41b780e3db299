import Capture
import ProtocolTable
import Protocols
import Testing
import Vocabulary
@testable import Faults

/// The faults on graphql-ws messages, decoded by the table's graphql-ws entry as the relay
/// hands them over: they match by kind (pongs, the handshake) and by the message `type` and
/// operation id (`event=`, `channel=`, `on=`).
@Suite struct GraphQLWSFaultTests {
    static func message(_ text: String, from side: Side) -> FaultFrame {
        var wire = ProtocolTable.standard.entry(for: "graphql-ws")
        let payload = Array(text.utf8)
        return FaultFrame(from: side, opcode: .text, payload: payload, event: wire.decode(payload))
    }

    static func context() -> FaultContext {
        FaultContext(now: 0, random: SeededGenerator(seed: 1), wire: ProtocolTable.standard.entry(for: "graphql-ws"))
    }

    static let ack = message(#"{"type":"connection_ack"}"#, from: .server)
    static func next(_ id: String) -> FaultFrame { message(#"{"id":"\#(id)","type":"next","payload":{"data":{"tick":1}}}"#, from: .server) }

    @Test func stallPongsSwallowsTheServersPongMessages() throws {
        var fault = try StallPongs(Make.rule("stall-pongs"))
        var context = Self.context()
        _ = fault.apply(.armed, context: &context)
        #expect(fault.apply(.frame(Self.message(#"{"type":"pong"}"#, from: .server)), context: &context).dropped)
        #expect(!fault.apply(.frame(Self.message(#"{"type":"pong"}"#, from: .client)), context: &context).dropped)
        #expect(!fault.apply(.frame(Self.message(#"{"type":"ping"}"#, from: .server)), context: &context).dropped)
        #expect(!fault.apply(.frame(Self.next("1")), context: &context).dropped)
    }

    @Test func messageFaultsPickByTypeAndOperationID() throws {
        var drop = try DropMessage(Make.rule("drop-message,event=next,channel=2"))
        var context = Self.context()
        _ = drop.apply(.armed, context: &context)
        #expect(drop.apply(.frame(Self.next("2")), context: &context).frame == .drop)
        #expect(drop.apply(.frame(Self.next("1")), context: &context).frame == .pass)
        #expect(drop.apply(.frame(Self.ack), context: &context).frame == .pass)
        var delay = try DelayMessage(Make.rule("delay-message:2s,event=connection_ack"))
        _ = delay.apply(.armed, context: &context)
        #expect(delay.apply(.frame(Self.ack), context: &context).frame == .delay(2_000_000))
        #expect(delay.apply(.frame(Self.next("1")), context: &context).frame == .pass)
    }

    @Test func closeOnATypeArmsAfterThatMessage() {
        var (faults, outcomes) = Make.connection(["close:4500,on=next"])
        #expect(outcomes.isEmpty)
        let afterAck = faults.frameSeen(event: Self.ack.event, now: 5)
        #expect(afterAck.isEmpty)
        let afterNext = faults.frameSeen(event: Self.next("1").event, now: 6)
        #expect(afterNext.count == 1)
    }

    @Test func theHandshakeFaultsLeaveTheAckAsItCame() throws {
        // connection_ack has the handshake's kind but no socket id or timeout to rewrite.
        #expect(Self.ack.event?.kind == .connectionEstablished)
        var strip = try StripSocketID(Make.rule("strip-socket-id"))
        var context = Self.context()
        #expect(strip.apply(.frame(Self.ack), context: &context) == .pass)
        var timeout = try ActivityTimeout(Make.rule("activity-timeout:5"))
        #expect(timeout.apply(.frame(Self.ack), context: &context) == .pass)
    }
}
