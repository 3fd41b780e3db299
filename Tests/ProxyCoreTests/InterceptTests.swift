import Capture
import Testing
import Vocabulary
import WebSocket
@testable import ProxyCore

/// The intercept's decision point without sockets: a paused connection's messages are held
/// (bounded, each with a timeout), then forwarded, edited or dropped as the operator decides
/// through the `InterceptDesk`, and the capture records each outcome truthfully.
@Suite struct InterceptTests {
    /// A session whose desk pauses every connection with `pause` (nil: none), open.
    func opened(_ pause: InterceptPause?) -> (Harness, InterceptDesk) {
        let desk = InterceptDesk()
        if let pause { desk.pause(nil, pause) }
        var config = RelayConfig(upstreamHost: "upstream.test:9000")
        config.intercept = desk
        var h = Harness(config: config)
        h.open()
        return (h, desk)
    }

    @Test func aHeldServerMessageReachesTheClientEditedAndTheCaptureKeepsBoth() throws {
        var (h, desk) = opened(InterceptPause(from: .server))
        let original = Frame.text(#"{"event":"news","data":"original"}"#)
        let held = h.server(Wire.fromServer(original))
        #expect(held.sent(to: .client).isEmpty, "a held message is not relayed")
        #expect(held.frameRecords.isEmpty, "nothing is recorded until it is decided")
        let listed = desk.listed().held
        #expect(listed.map(\.id) == [1])
        #expect(listed.first?.payload == original.payload && listed.first?.from == .server)

        #expect(desk.decide(1, id: 1, .edit(Array(#"{"event":"news","data":"edited"}"#.utf8))))
        #expect(!desk.decide(1, id: 1, .drop), "a decided message cannot be decided twice")
        let decided = h.handle(.faultsChanged, at: 2_000_000)
        let sent = try Wire.frames(decided.sent(to: .client))
        #expect(sent.map(\.payload) == [Array(#"{"event":"news","data":"edited"}"#.utf8)])
        #expect(sent.first?.opcode == .text && sent.first?.isMasked == false)
        let frames = decided.frameRecords
        #expect(frames.map(\.action) == [.dropped, .injected])
        #expect(frames.map(\.fault) == ["intercept:edit", "intercept:edit"])
        #expect(frames.first?.payload == original.payload, "the original as received")
        #expect(frames.last?.payload == Array(#"{"event":"news","data":"edited"}"#.utf8), "the edit as sent")
        #expect(decided.faults.map(\.kind) == ["intercept"])
        #expect(decided.faults.first?.detail.contains("edited held message 1 from the server") == true)
        #expect(desk.listed().held.isEmpty)
    }

    @Test func forwardSendsTheOriginalBytesRecordedAsDelayedByTheHold() throws {
        var (h, desk) = opened(InterceptPause())
        let message = Wire.fromClient(.text("hello"))
        h.client(message)
        #expect(desk.decide(1, id: 1, .forward))
        let decided = h.handle(.faultsChanged, at: 1_500_000)
        #expect(try Wire.frames(decided.sent(to: .server)).map(\.payload) == [Array("hello".utf8)])
        #expect(decided.frameRecords.map(\.action) == [.delayed(1_500_000)])
        #expect(decided.frameRecords.first?.fault == "intercept")
        #expect(decided.faults.isEmpty, "forwarding unchanged is not an edit")
    }

    @Test func dropSendsNothingAndSaysTheOperatorDroppedIt() {
        var (h, desk) = opened(InterceptPause(from: .server))
        h.server(Wire.fromServer(.text("gone")))
        #expect(desk.decide(1, id: 1, .drop))
        let decided = h.handle(.faultsChanged)
        #expect(decided.sent(to: .client).isEmpty)
        #expect(decided.frameRecords.map(\.action) == [.dropped])
        #expect(decided.frameRecords.first?.fault == "intercept:drop")
        #expect(decided.faults.first?.detail == "the operator dropped held message 1 from the server")
    }

    @Test func anUndecidedMessageIsForwardedUnchangedAtItsTimeout() throws {
        var (h, desk) = opened(InterceptPause(from: .server, timeout: 5_000_000))
        h.now = 1_000_000
        h.server(Wire.fromServer(.text("late")))
        let fired = h.fireTimer()
        #expect(h.now == 6_000_000, "due at hold time + timeout")
        #expect(try Wire.frames(fired.sent(to: .client)).map(\.payload) == [Array("late".utf8)])
        #expect(fired.frameRecords.map(\.action) == [.delayed(5_000_000)])
        #expect(fired.notes.first?.message.contains("forwarded unchanged after 5 s undecided") == true)
        #expect(desk.listed().held.isEmpty)
    }

    @Test func controlFramesAndUnmatchedMessagesFlowWhileAMessageIsHeld() {
        var (h, desk) = opened(InterceptPause(from: .server, match: "secret"))
        #expect(h.server(Wire.fromServer(.text("a secret"))).sent(to: .client).isEmpty)
        let ping = Frame(opcode: .ping, payload: [1])
        #expect(h.server(Wire.fromServer(ping)).sent(to: .client) == Wire.fromServer(ping))
        #expect(h.server(Wire.fromServer(.text("public"))).sent(to: .client) == Wire.fromServer(.text("public")))
        #expect(!h.client(Wire.fromClient(.text("secret from the client"))).sent(to: .server).isEmpty, "from=server only")
        #expect(desk.listed().held.count == 1)
    }

    @Test func resumingForwardsWhatIsHeldInOrder() throws {
        var (h, desk) = opened(InterceptPause(from: .server))
        for text in ["one", "two", "three"] { h.server(Wire.fromServer(.text(text))) }
        desk.resume(nil)
        let resumed = h.handle(.faultsChanged)
        #expect(try Wire.frames(resumed.sent(to: .client)).map { String(decoding: $0.payload, as: UTF8.self) } == ["one", "two", "three"])
        #expect(h.server(Wire.fromServer(.text("four"))).sent(to: .client) == Wire.fromServer(.text("four")), "no longer paused")
    }

    @Test func aClosingSenderHasItsHeldMessagesForwardedBeforeItsClose() throws {
        var (h, _) = opened(InterceptPause(from: .server))
        h.server(Wire.fromServer(.text("before the close")))
        let closing = h.server(Wire.fromServer(.close(code: 1000)))
        let frames = try Wire.frames(closing.sent(to: .client))
        #expect(frames.map(\.opcode) == [.text, .close])
    }

    @Test func aFullQueueRelaysUnheldAndSaysSo() {
        var (h, desk) = opened(InterceptPause(from: .server))
        for i in 0..<InterceptQueue.maxMessages { h.server(Wire.fromServer(.text("m\(i)"))) }
        let over = h.server(Wire.fromServer(.text("one too many")))
        #expect(over.sent(to: .client) == Wire.fromServer(.text("one too many")))
        #expect(over.notes.first?.message.contains("the most one connection holds (100 messages") == true)
        #expect(desk.listed().held.count == InterceptQueue.maxMessages)
        #expect(desk.listed().overflowed == [1: 1])
    }

    @Test func theQueueBoundsBytesAndTakesExpiredOnesOldestFirst() {
        var queue = InterceptQueue()
        let big = Frame.text(String(repeating: "x", count: InterceptQueue.maxBytes - 10))
        let record = FrameRecord(conn: 1, t: 0, from: .server, opcode: .text, masked: false, payload: [])
        #expect(queue.hold(big, record: record, now: 0, timeout: 10) == 1)
        #expect(queue.hold(.text(String(repeating: "y", count: 11)), record: record, now: 0, timeout: 10) == nil)
        #expect(queue.hold(.text("small"), record: record, now: 5, timeout: 10) == 2)
        #expect(queue.overflowed == 1)
        #expect(queue.nextDeadline == 10)
        #expect(queue.takeExpired(now: 10).map(\.id) == [1])
        #expect(queue.takeExpired(now: 15).map(\.id) == [2])
        #expect(queue.isEmpty && queue.heldBytes == 0)
    }

    @Test func aConnectionThatEndsWithMessagesHeldRecordsThemAsNeverRelayed() {
        var (h, desk) = opened(InterceptPause(from: .server))
        h.server(Wire.fromServer(.text("stuck")))
        let ended = h.handle(.ended(side: .client, kind: .rst, detail: nil))
        #expect(ended.frameRecords.contains { $0.action == .dropped && $0.fault == "intercept" })
        #expect(ended.notes.contains { $0.message.contains("ended with 1 messages held") })
        #expect(desk.listed().held.isEmpty)
    }

    @Test func aPauseTimeoutIsClampedToItsRange() {
        #expect(InterceptPause(timeout: 0).timeout == InterceptPause.timeoutRange.lowerBound)
        #expect(InterceptPause(timeout: .max).timeout == InterceptPause.timeoutRange.upperBound)
    }
}
