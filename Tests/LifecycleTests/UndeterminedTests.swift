import Testing
import Capture
import WebSocket
@testable import Lifecycle

extension Outcome {
    var undetermined: [Undetermined] { events.compactMap { if case .undetermined(let u) = $0 { u } else { nil } } }
}

/// A check whose window is still open when the capture ends is reported as undetermined,
/// never silently passed (issue 17 item 10).
@Suite struct UndeterminedTests {
    /// The README's skip-resubscribe session in small: subscribed, dropped, reconnected,
    /// never subscribed again, and the capture ends 5 s into the 10 s window.
    func skippedResubscribe(endAt end: Double) -> Wire {
        var w = Wire()
        let c1 = w.connect(at: 0)
        w.subscribe(c1, at: 0.1, "private-chat", auth: "key:aaa")
        w.subscribed(c1, at: 0.2, "private-chat")
        w.end(c1, at: 3, kind: .fin)
        let c2 = w.connect(at: 3.7)
        w.server(c2, at: end - 0.5, #"{"event":"news","channel":"public","data":"{}"}"#)
        return w
    }

    @Test func resubscribeWindowOpenAtTheEndIsUndetermined() throws {
        let outcome = try analyze(skippedResubscribe(endAt: 9), end: 9)
        #expect(outcome.findings("channels.resubscribe").isEmpty)
        let open = try #require(outcome.undetermined.first { $0.rule == "channels.resubscribe" })
        #expect(open.conn == 2)
        #expect(open.t == Wire.us(3.71))
        #expect(open.deadline == Wire.us(13.71))
        #expect(open.message.contains("private-chat not subscribed again yet"))
        #expect(open.message.contains("the capture ended at 9.00 s"))
    }

    @Test func aWindowThatClosesInTheCaptureIsAFindingNotUndetermined() throws {
        let outcome = try analyze(skippedResubscribe(endAt: 15), end: 15)
        #expect(outcome.findings("channels.resubscribe").count == 1)
        #expect(outcome.undetermined.isEmpty)
    }

    @Test func aConnectionEndingInsideTheWindowLeavesItUndetermined() throws {
        var w = skippedResubscribe(endAt: 8)
        w.close(2, at: 8, from: .client, code: 1000)
        let outcome = try analyze(w, end: 8.1)
        #expect(outcome.findings("channels.resubscribe").isEmpty)
        let open = try #require(outcome.undetermined.first { $0.rule == "channels.resubscribe" })
        #expect(open.message.contains("connection 2 ended at 8.00 s"))
    }

    @Test func resubscribedChannelsLeaveNothingOpen() throws {
        var w = skippedResubscribe(endAt: 9)
        w.subscribe(2, at: 4, "private-chat", auth: "key:bbb")
        let outcome = try analyze(w, end: 9)
        #expect(outcome.undetermined.isEmpty)
    }

    @Test func anUnansweredPingAtTheEndIsUndeterminedForBothPingRules() throws {
        var w = Wire()
        let c = w.connect(at: 0)
        w.ping(c, at: 10)
        let outcome = try analyze(w, end: 20)
        #expect(outcome.findings.isEmpty)
        #expect(Set(outcome.undetermined.map(\.rule)) == ["server.pong-missing", "stale.close-missing"])
        let pong = try #require(outcome.undetermined.first { $0.rule == "server.pong-missing" })
        #expect(pong.party == .server && pong.deadline == Wire.us(40))
    }

    @Test func signinOwedAtTheEndIsUndetermined() throws {
        var w = Wire()
        let c1 = w.connect(at: 0)
        w.client(c1, at: 0.1, #"{"event":"bird:signin","data":{"auth":"k:s","user_data":"{}"}}"#)
        w.server(c1, at: 0.2, #"{"event":"bird:signin_success","data":"{}"}"#)
        w.end(c1, at: 2, kind: .fin)
        _ = w.connect(at: 3)
        let outcome = try analyze(w, end: 5)
        #expect(outcome.undetermined.map(\.rule) == ["signin.repeat"])
    }

    @Test func authSignatureIsUncheckedWithoutTheSecretOnly() throws {
        let spec = try SpecLoader.load("bird")
        let without = RuleRegistry.unchecked(spec: spec, appSecret: nil)
        #expect(without.map(\.rule) == ["channels.auth-signature"])
        #expect(without.first?.reason.contains("--app-secret") == true)
        #expect(RuleRegistry.unchecked(spec: spec, appSecret: "s3cret").isEmpty)
    }
}
