import JSON
import Sim
import Testing
import Vocabulary
import WebSocket

/// The Phoenix machine of `sim server --protocol phoenix`, without sockets: replies by ref,
/// joins, leaves, ticks, and the close/refuse/stall settings.
@Suite struct PhoenixServerTests {
    private func server(_ change: (inout SimServerSettings) -> Void = { _ in }) -> any SimProtocolServer {
        var settings = SimServerSettings()
        settings.protocolName = "phoenix"
        settings.eventInterval = nil
        change(&settings)
        return SimServerProtocols.make(settings, seed: 1)!
    }

    /// The JSON of every text frame the commands send to `id`.
    private func sent(_ commands: [SimServerCommand], to id: SimConnectionID) -> [JSONValue] {
        commands.compactMap {
            guard case .send(id, let frame) = $0, frame.opcode == .text else { return nil }
            return try? JSONParser.parse(frame.payload)
        }
    }

    private func text(_ s: String) -> SimServerEvent { .received(1, .text(s)) }

    @Test func repliesToHeartbeatsAndJoinsByRef() {
        var machine = server()
        _ = machine.handle(.opened(1, path: "/socket/websocket?vsn=2.0.0"), now: 0)
        let beat = sent(machine.handle(text(#"[null,"5","phoenix","heartbeat",{}]"#), now: 1), to: 1)
        #expect(beat == [try! JSONParser.parse(#"[null,"5","phoenix","phx_reply",{"status":"ok","response":{}}]"#)])
        let join = sent(machine.handle(text(#"["6","6","room:lobby","phx_join",{}]"#), now: 2), to: 1)
        #expect(join == [try! JSONParser.parse(#"["6","6","room:lobby","phx_reply",{"status":"ok","response":{}}]"#)])
        let leave = sent(machine.handle(text(#"["6","7","room:lobby","phx_leave",{}]"#), now: 3), to: 1)
        #expect(leave.map { $0.arrayValue?[3].stringValue } == ["phx_reply", "phx_close"])
        #expect(leave.first?.arrayValue?[1].stringValue == "7")
    }

    @Test func speaksV1WhenTheURLSaysSo() {
        var machine = server()
        _ = machine.handle(.opened(1, path: "/socket/websocket?vsn=1.0.0"), now: 0)
        let reply = sent(machine.handle(text(#"{"topic":"phoenix","event":"heartbeat","payload":{},"ref":"3"}"#), now: 1), to: 1)
        #expect(reply.first?["event"]?.stringValue == "phx_reply")
        #expect(reply.first?["ref"]?.stringValue == "3")
        #expect(reply.first?["topic"]?.stringValue == "phoenix")
    }

    @Test func ticksReachJoinedTopicsAndPushesAreRelayed() {
        var machine = server { $0.eventInterval = 100 }
        #expect(machine.start(now: 0) == [.schedule(.tick, at: 100)])
        _ = machine.handle(.opened(1, path: "/socket/websocket?vsn=2.0.0"), now: 0)
        _ = machine.handle(.opened(2, path: "/socket/websocket?vsn=2.0.0"), now: 0)
        _ = machine.handle(.received(1, .text(#"["1","1","room:a","phx_join",{}]"#)), now: 1)
        _ = machine.handle(.received(2, .text(#"["9","9","room:a","phx_join",{}]"#)), now: 1)
        let tick = machine.handle(.timer(.tick), now: 100)
        #expect(sent(tick, to: 1).map { $0.arrayValue?[3].stringValue } == ["sim-tick"])
        #expect(sent(tick, to: 2).first?.arrayValue?[0].stringValue == "9")
        #expect(tick.last == .schedule(.tick, at: 200))
        let push = machine.handle(.received(1, .text(#"["1","2","room:a","shout",{"m":1}]"#)), now: 101)
        #expect(sent(push, to: 1).first?.arrayValue?[3].stringValue == "phx_reply")
        #expect(sent(push, to: 2) == [try! JSONParser.parse(#"["9",null,"room:a","shout",{"m":1}]"#)])
    }

    @Test func stallPongsLeavesHeartbeatsUnanswered() {
        var machine = server { $0.stallPongs = true }
        _ = machine.handle(.opened(1, path: "/socket/websocket?vsn=2.0.0"), now: 0)
        #expect(sent(machine.handle(text(#"[null,"5","phoenix","heartbeat",{}]"#), now: 1), to: 1).isEmpty)
        #expect(machine.handle(.received(1, Frame(opcode: .ping, payload: [1])), now: 1).isEmpty)
    }

    @Test func answersTheClientsCloseWithItsCode() {
        var machine = server()
        _ = machine.handle(.opened(1, path: "/socket/websocket?vsn=2.0.0"), now: 0)
        #expect(machine.handle(.received(1, Frame(opcode: .close, payload: [0x03, 0xE8])), now: 1) == [.close(1, code: 1000, reason: "")])
        #expect(machine.handle(text(#"[null,"5","phoenix","heartbeat",{}]"#), now: 2).isEmpty, "nothing after the close")
    }

    @Test func refusesAndClosesOnSchedule() {
        var refusing = server { $0.refuseCode = 4403 }
        let refused = refusing.handle(.opened(1, path: "/socket/websocket?vsn=2.0.0"), now: 0)
        #expect(refused.contains(.close(1, code: 4403, reason: "refused by the simulator")))
        var closing = server { $0.closeAfter = 500; $0.closeCode = 1011 }
        #expect(closing.handle(.opened(1, path: "/socket/websocket?vsn=2.0.0"), now: 0).contains(.schedule(.closeAfter(1), at: 500)))
        #expect(closing.handle(.timer(.closeAfter(1)), now: 500).first == .close(1, code: 1011, reason: "closed by the simulator (--close-after)"))
    }

    @Test func ignoresWhatIsNoPhoenixMessage() {
        var machine = server()
        _ = machine.handle(.opened(1, path: "/socket/websocket"), now: 0)
        #expect(machine.handle(text("not json"), now: 1).isEmpty)
        #expect(machine.handle(text(#"["1","2","room:x","shout",{}]"#), now: 1).count == 1)  // unjoined: an error reply
    }
}
