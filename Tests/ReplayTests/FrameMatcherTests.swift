import Bird
import Capture
import Testing
import WebSocket
@testable import Replay

@Suite struct FrameMatcherTests {
    let matcher = FrameMatcher(rules: MatchRules(BirdDecoder.volatileFields))

    func compare(_ recorded: String, _ observed: String, with matcher: FrameMatcher? = nil) -> FrameMatcher.Comparison {
        (matcher ?? self.matcher).compare(recorded: Fixture.text(1, 0, .client, recorded), observed: .text(observed))
    }

    @Test func ignoresAuthAndChannelData() {
        let observed = #"{"event":"bird:subscribe","data":{"channel":"private-orders","auth":"key:bbbb","channel_data":"{\"user_id\":\"9\"}"}}"#
        let recorded = #"{"event":"bird:subscribe","data":{"channel":"private-orders","auth":"key:aaaa","channel_data":"{\"user_id\":\"1\"}"}}"#
        #expect(compare(recorded, observed).verdict == .same)
    }

    @Test func reportsTheDifferingPathWithBothValues() {
        let observed = #"{"event":"bird:subscribe","data":{"channel":"private-other","auth":"x"}}"#
        #expect(compare(Fixture.subscribe, observed).verdict == .different([#"data.channel: "private-other" (recorded "private-orders")"#]))
    }

    @Test func otherEventIsUnrelated() {
        #expect(compare(Fixture.subscribe, #"{"event":"bird:ping","data":{}}"#).verdict == .unrelated)
        #expect(matcher.compare(recorded: Fixture.text(1, 0, .client, "x"), observed: Frame(opcode: .binary, payload: Array("x".utf8))).verdict == .unrelated)
    }

    @Test func comparesInsideJSONStrings() {
        let recorded = #"{"event":"e","data":"{\"a\":1,\"b\":[1,2]}"}"#
        #expect(compare(recorded, #"{"event":"e","data":"{\"b\":[1,2],\"a\":1}"}"#).verdict == .same)
        #expect(compare(recorded, #"{"event":"e","data":"{\"a\":2,\"b\":[1,2]}"}"#).verdict == .different(["data.a: 2 (recorded 1)"]))
    }

    @Test func socketIDIsLearntThenHeldTo() {
        var matcher = self.matcher
        let first = compare(Fixture.established, #"{"event":"bird:connection_established","data":"{\"socket_id\":\"999.1\",\"activity_timeout\":120}"}"#, with: matcher)
        #expect(first.verdict == .same)
        #expect(first.learned == ["111.222": "999.1"])
        matcher.commit(first)
        #expect(matcher.mapping == ["111.222": "999.1"])
        let consistent = #"{"event":"client-typing","channel":"private-orders","data":{"socket_id":"999.1"}}"#
        #expect(compare(Fixture.typing, consistent, with: matcher).verdict == .same)
        let inconsistent = #"{"event":"client-typing","channel":"private-orders","data":{"socket_id":"5.5"}}"#
        guard case .different(let details) = compare(Fixture.typing, inconsistent, with: matcher).verdict else {
            Issue.record("a socket_id other than the mapped one must differ")
            return
        }
        #expect(details.count == 1 && details[0].hasPrefix("data.socket_id"))
    }

    @Test func rewriteWritesTheLiveSocketIDIntoRecordedFrames() throws {
        var matcher = self.matcher
        matcher.commit(FrameMatcher.Comparison(verdict: .same, learned: ["111.222": "999.1"]))
        let rewritten = String(decoding: matcher.rewrite(Array(Fixture.typing.utf8)), as: UTF8.self)
        #expect(rewritten == #"{"event":"client-typing","channel":"private-orders","data":{"socket_id":"999.1"}}"#)
        #expect(matcher.rewrite(Array(Fixture.subscribe.utf8)) == Array(Fixture.subscribe.utf8))
    }

    @Test func closeFramesCompareCodeAndReason() {
        let recorded = Fixture.close(1, 0, .client, 4009, "bye")
        #expect(matcher.compare(recorded: recorded, observed: .close(code: 4009, reason: "bye")).verdict == .same)
        #expect(matcher.compare(recorded: recorded, observed: .close(code: 1000, reason: "")).verdict
                == .different([#"close: 1000 (recorded 4009 "bye")"#]))
    }

    @Test func extraIgnoredFieldsFromTheCommandLine() {
        let rules = MatchRules(BirdDecoder.volatileFields).ignoring(["channel", "socket_id"])
        #expect(rules.ignored.contains("channel") && !rules.mapped.contains("socket_id"))
        let observed = #"{"event":"bird:subscribe","data":{"channel":"private-other","auth":"x"}}"#
        #expect(compare(Fixture.subscribe, observed, with: FrameMatcher(rules: rules)).verdict == .same)
    }
}
