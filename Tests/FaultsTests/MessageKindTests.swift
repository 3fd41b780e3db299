import Capture
import JSON
import Testing
@testable import Faults
import Vocabulary

/// Message-level kinds matched by event, channel and direction.
@Suite struct MessageKindTests {
    func on(_ fault: inout some Fault, _ frame: FaultFrame, at now: Micros = 0) -> FaultVerdict {
        var context = Make.context(now)
        return fault.apply(.frame(frame), context: &context)
    }

    func arm(_ fault: inout some Fault, at now: Micros = 0) -> FaultVerdict {
        var context = Make.context(now)
        return fault.apply(.armed, context: &context)
    }

    func channelEvent(_ name: String, channel: String, from side: Side = .server) -> FaultFrame {
        Make.text(#"{"event":"\#(name)","channel":"\#(channel)","data":"{}"}"#, from: side)
    }

    @Test func dropMessageMatchesByEventChannelAndDirection() throws {
        var fault = try DropMessage(Make.rule("drop-message,event=news,channel=room-1,dir=s2c"))
        #expect(arm(&fault).report == "dropping news messages on room-1 from the server")
        #expect(on(&fault, channelEvent("news", channel: "room-1")).frame == .drop)
        #expect(on(&fault, channelEvent("news", channel: "room-2")).frame == .pass)
        #expect(on(&fault, channelEvent("other", channel: "room-1")).frame == .pass)
        #expect(on(&fault, channelEvent("news", channel: "room-1", from: .client)).frame == .pass)
        var all = try DropMessage(Make.rule("drop-message"))
        _ = arm(&all)
        #expect(on(&all, FaultFrame(from: .client, opcode: .binary, payload: [1, 2])).frame == .drop)
        #expect(on(&all, FaultFrame(from: .client, opcode: .ping, payload: [])).frame == .pass)
    }

    @Test func delayMessageHoldsOnlyMatches() throws {
        var fault = try DelayMessage(Make.rule("delay-message:2s,event=bird:pong"))
        _ = arm(&fault)
        #expect(on(&fault, Make.event("bird:pong", from: .server)).frame == .delay(2_000_000))
        #expect(on(&fault, Make.event("bird:ping", from: .server)).frame == .pass)
    }

    @Test func duplicateResendsTheMessageAsItsSender() throws {
        var fault = try Duplicate(Make.rule("duplicate:2,event=news"))
        _ = arm(&fault)
        let news = Make.event("news", from: .server)
        let verdict = on(&fault, news)
        #expect(verdict.frame == .pass)
        #expect(verdict.effects == Array(repeating: .resend(to: .client, opcode: .text, payload: news.payload), count: 2))
        #expect(on(&fault, Make.event("other", from: .server)) == .pass)
        #expect(throws: FaultRuleError.self) { try FaultRule.parse("duplicate:0") }
    }

    @Test func reorderSendsTheHeldMessageAfterTheNextOne() throws {
        var fault = try Reorder(Make.rule("reorder,event=first,within=500ms"))
        _ = arm(&fault)
        let first = Make.event("first", from: .server)
        let held = on(&fault, first, at: 10)
        #expect(held.frame == .drop && held.wakeup == 500_010)
        // A frame the other way does not release it; the next one from the server does.
        #expect(on(&fault, Make.event("x", from: .client)) == .pass)
        let next = on(&fault, Make.event("second", from: .server))
        #expect(next.frame == .pass)
        #expect(next.effects == [.resend(to: .client, opcode: .text, payload: first.payload)])
        // Without a next message, the timer releases it; a close first discards it.
        _ = on(&fault, first)
        var context = Make.context(600_000)
        #expect(fault.apply(.timer, context: &context).effects.count == 1)
        _ = on(&fault, first)
        let close = on(&fault, FaultFrame(from: .server, opcode: .close, payload: []))
        #expect(close.frame == .pass && close.effects.isEmpty && close.report?.contains("discarded") == true)
    }

    @Test func rewriteSetsAFieldInsideAStringEncodedData() throws {
        var fault = try Rewrite(Make.rule("rewrite:data.socket_id=0.0,event=bird:connection_established"))
        _ = arm(&fault)
        let verdict = on(&fault, Make.handshake())
        guard case .rewrite(let bytes) = verdict.frame else {
            Issue.record("not rewritten: \(verdict)")
            return
        }
        let envelope = try JSONParser.parse(bytes)
        let data = try JSONParser.parse(try #require(envelope["data"]?.stringValue))
        #expect(data["socket_id"] == .double(0.0) || data["socket_id"]?.doubleValue == 0)
        #expect(data["activity_timeout"]?.intValue == 120)
        #expect(on(&fault, Make.event("bird:pong", from: .server)) == .pass)
    }

    @Test func rewriteValuesAndPaths() throws {
        var top = try Rewrite(Make.rule(#"rewrite:data={"code":4009},event=news"#))
        _ = arm(&top)
        guard case .rewrite(let bytes) = on(&top, Make.event("news", from: .server, data: #"{"x":1}"#)).frame else {
            Issue.record("not rewritten")
            return
        }
        #expect(String(decoding: bytes, as: UTF8.self) == #"{"event":"news","data":{"code":4009}}"#)
        var text = try Rewrite(Make.rule("rewrite:data.message=hello"))
        _ = arm(&text)
        guard case .rewrite(let out) = on(&text, Make.event("e", from: .server, data: #"{"message":"x"}"#)).frame else {
            Issue.record("not rewritten")
            return
        }
        #expect(String(decoding: out, as: UTF8.self).contains(#""message":"hello""#))
        // A missing parent leaves the message alone.
        var missing = try Rewrite(Make.rule("rewrite:data.a.b=1"))
        _ = arm(&missing)
        #expect(on(&missing, Make.event("e", from: .server)) == .pass)
        #expect(throws: FaultRuleError.self) { try FaultRule.parse("rewrite:data") }
        #expect(throws: FaultRuleError.self) { try FaultRule.parse("rewrite:data..x=1") }
    }

    @Test func fragmentAsksForNFramesForMatchingMessages() throws {
        var fault = try Fragment(Make.rule("fragment:3,dir=s2c"))
        _ = arm(&fault)
        #expect(on(&fault, Make.event("news", from: .server)).frame == .fragment(3))
        #expect(on(&fault, Make.event("news", from: .client)).frame == .pass)
        #expect(on(&fault, FaultFrame(from: .server, opcode: .text, payload: [65])).frame == .pass)
        #expect(throws: FaultRuleError.self) { try FaultRule.parse("fragment:1") }
    }
}
