import Capture
import Testing
import Vocabulary
import WebSocket
@testable import Replay

/// Which recorded peer frames a replay waits for and compares one by one, which loosely,
/// and what the script does with them (pure: a fake clock).
@Suite struct PeerFrameClassesTests {
    static let tick = #"{"event":"sim-event","channel":"news","data":"{\"n\":1}"}"#
    static let relayed = #"{"event":"client-chat","channel":"private-chat","data":{}}"#
    static let joined = #"{"event":"bird_internal:member_added","channel":"presence-lobby","data":"{}"}"#

    /// The server greets, the client subscribes, the server confirms; meanwhile the server
    /// pushes `sim-event` every 2 s on its own and relays another client's `client-chat`;
    /// the client closes at 7 s.
    static func pushed() -> RecordedConnection {
        var recording = Fixture.conversation()
        recording.frames = [
            Fixture.text(1, 10_000, .server, Fixture.established),
            Fixture.text(1, 50_000, .client, Fixture.subscribe),
            Fixture.text(1, 60_000, .server, Fixture.succeeded),
            Fixture.text(1, 2_000_000, .server, tick),
            Fixture.text(1, 3_100_000, .server, relayed),
            Fixture.text(1, 3_500_000, .server, joined),
            Fixture.text(1, 4_000_000, .server, tick),
            Fixture.text(1, 6_000_000, .server, tick),
            Fixture.close(1, 7_000_000, .client, 1000, ""),
            Fixture.close(1, 7_010_000, .server, 1000, ""),
        ]
        recording.serverEnd = RecordedEnding(kind: .fin, t: 7_020_000)
        recording.clientEnd = RecordedEnding(kind: .fin, t: 7_021_000)
        recording.lastActivity = 7_021_000
        return recording
    }

    @Test func timerEventsOthersEventsAndAnswersAreToldApart() {
        let classes = PeerFrameClasses.learn(from: [Self.pushed()], role: .client, wire: .bird)
        #expect(classes.timer == ["sim-event"])
        #expect(classes.others == ["client-chat", "bird_internal:member_added"])
        #expect(classes.treatment(of: "bird_internal:subscription_succeeded", kind: .subscriptionSucceeded) == .strict)
        #expect(classes.treatment(of: "bird:connection_established", kind: .connectionEstablished) == .strict)
        // As the server, the same frames are the live peer's part: another client's events
        // are not "others" then.
        #expect(PeerFrameClasses.learn(from: [Self.pushed()], role: .server, wire: .bird).others.isEmpty)
        #expect(PeerFrameClasses.learn(from: [Self.pushed()], role: .client, ignoring: ["sim-event"], wire: .bird).treatment(of: "sim-event", kind: .other) == .ignored)
    }

    /// With a client sending every 300 ms, every tick (every 400 ms) comes within the
    /// response window of a client frame, at lags from 40 to 245 ms: still a timer.
    @Test func timerEventsInBusyTrafficAreStillTimerEvents() {
        var recording = Fixture.conversation()
        recording.frames = [Fixture.text(1, 10_000, .server, Fixture.established)]
        for t in stride(from: Micros(100_000), to: 2_000_000, by: 300_000) {
            recording.frames.append(Fixture.text(1, t, .client, #"{"event":"client-chat","data":{}}"#))
        }
        for t in stride(from: Micros(345_000), to: 2_000_000, by: 400_000) {
            recording.frames.append(Fixture.text(1, t, .server, Self.tick))
        }
        recording.frames.sort { $0.t < $1.t }
        #expect(PeerFrameClasses.learn(from: [recording], role: .client, wire: .bird).timer == ["sim-event"])
    }

    /// A server answer that always follows the client's request (within the response
    /// window) stays strict, even if its name means nothing to the protocol.
    @Test func anAppLevelAnswerStaysStrict() {
        var recording = Fixture.conversation()
        recording.frames = [
            Fixture.text(1, 10_000, .server, Fixture.established),
            Fixture.text(1, 1_000_000, .client, #"{"event":"client-typing","data":{}}"#),
            Fixture.text(1, 1_005_000, .server, #"{"event":"typing-ack","data":{}}"#),
            Fixture.text(1, 4_000_000, .client, #"{"event":"client-typing","data":{}}"#),
            Fixture.text(1, 4_005_000, .server, #"{"event":"typing-ack","data":{}}"#),
        ]
        #expect(PeerFrameClasses.learn(from: [recording], role: .client, wire: .bird).treatment(of: "typing-ack", kind: .other) == .strict)
    }

    func open(_ recording: RecordedConnection, classes: PeerFrameClasses, speed: Double? = nil) throws -> ReplayScript {
        var config = ReplayScript.Config(role: .client, wire: .bird, timing: ReplayTiming(speed: speed), host: "127.0.0.1:9")
        config.classes = classes
        var replay = ReplayScript(recording, config: config)
        let out = replay.handle(.connected, now: 0)
        var parser = HTTPHeadParser()
        parser.append(try #require(out.writes.first))
        let request = try #require(try parser.parseRequest())
        _ = replay.handle(.response(WebSocketHandshake.response(accepting: request)), now: 1_000)
        return replay
    }

    /// At --speed max the client's close goes out as soon as the server answered the
    /// subscription: nothing waits for the timer events or the other client's frames
    /// recorded before it (which a live server without those clients never sends).
    @Test func framesNothingOfOursCausedAreNotWaitedFor() throws {
        let recording = Self.pushed()
        var replay = try open(recording, classes: PeerFrameClasses.learn(from: [recording], role: .client, wire: .bird))
        #expect(replay.handle(.frame(.text(Fixture.established)), now: 2_000).sentTexts == [Fixture.subscribe])
        let answered = replay.handle(.frame(.text(Fixture.succeeded)), now: 3_000)
        #expect(answered.sentFrames.map(\.opcode) == [.close])
        #expect(answered.deviations.isEmpty)
        // Strictly (no classes), the close waits for the three ticks and the relayed frames.
        var strict = try open(recording, classes: PeerFrameClasses())
        #expect(strict.handle(.frame(.text(Fixture.established)), now: 2_000).sentTexts == [Fixture.subscribe])
        let waiting = strict.handle(.frame(.text(Fixture.succeeded)), now: 3_000)
        #expect(waiting.sentFrames.isEmpty)
        #expect(waiting.schedules.first.map { $0 > 1_000_000 } == true)
    }

    /// Timer events are matched loosely: their content may change, their count follows the
    /// live connection's lifetime; a count far off is a difference, with the numbers.
    @Test func timerEventsAreMatchedByCountNotContent() throws {
        let recording = Self.pushed()
        let classes = PeerFrameClasses.learn(from: [recording], role: .client, wire: .bird)
        var replay = try open(recording, classes: classes, speed: 1)
        _ = replay.handle(.frame(.text(Fixture.established)), now: 10_000)
        _ = replay.handle(.timer, now: 50_000)
        _ = replay.handle(.frame(.text(Fixture.succeeded)), now: 60_000)
        for (i, t) in [Micros(2_000_000), 4_000_000, 6_000_000].enumerated() {
            let other = #"{"event":"sim-event","channel":"news","data":"{\"n\":\#(i + 40)}"}"#
            #expect(replay.handle(.frame(.text(other)), now: t).deviations.isEmpty)
        }
        let closed = replay.handle(.timer, now: 7_000_000)
        #expect(closed.sentFrames.map(\.opcode) == [.close])
        let end = replay.handle(.frame(.close(code: 1000, reason: "")), now: 7_010_000)
            + replay.handle(.peerEnded(.fin), now: 7_020_000) + replay.handle(.timer, now: 7_021_000)
        #expect(end.deviations.isEmpty)
        #expect(end.contains(.tally([LooseTally(event: "sim-event", treatment: .timer, recorded: 3, live: 3),
                                     LooseTally(event: "client-chat", treatment: .others, recorded: 1, live: 0),
                                     LooseTally(event: "bird_internal:member_added", treatment: .others, recorded: 1, live: 0)])))

        // A server that stopped its timer: none in 7 s where 3 were recorded.
        var silent = try open(recording, classes: classes, speed: 1)
        _ = silent.handle(.frame(.text(Fixture.established)), now: 10_000)
        _ = silent.handle(.timer, now: 50_000)
        _ = silent.handle(.frame(.text(Fixture.succeeded)), now: 60_000)
        _ = silent.handle(.timer, now: 7_000_000)
        let over = silent.handle(.frame(.close(code: 1000, reason: "")), now: 7_010_000)
            + silent.handle(.peerEnded(.fin), now: 7_020_000) + silent.handle(.timer, now: 7_021_000)
        let missing = try #require(over.deviations.first)
        #expect(over.deviations.count == 1)
        #expect(missing.kind == .missing)
        #expect(missing.event == "sim-event")
        #expect(missing.details.first?.hasPrefix("0 in 7.02s live, 3 in 7.019s recorded (expected 1-6") == true, "\(missing.details)")
    }

    @Test func theLooseCheckScalesWithTheLiveLifetime() {
        var events = LooseEvents()
        for t in [Micros(5_000_000), 10_000_000, 15_000_000, 20_000_000] { events.noteRecorded("tick", .timer, at: t) }
        // A quarter of the recorded lifetime live (--speed max): none is fine.
        #expect(events.check(recordedSpan: 20_000_000, liveSpan: 5_000_000).isEmpty)
        // Four times as many as the rate allows: extra.
        for t in stride(from: Micros(0), to: 5_000_000, by: 500_000) { events.noteLive("tick", .timer, at: t) }
        #expect(events.check(recordedSpan: 20_000_000, liveSpan: 5_000_000).map(\.kind) == [.extra])
        // The right count at another interval: different.
        var bursts = LooseEvents()
        for t in [Micros(5_000_000), 10_000_000, 15_000_000, 20_000_000] { bursts.noteRecorded("tick", .timer, at: t) }
        for t in [Micros(1_000_000), 1_300_000, 1_600_000, 1_900_000] { bursts.noteLive("tick", .timer, at: t) }
        #expect(bursts.check(recordedSpan: 20_000_000, liveSpan: 20_000_000).map(\.kind) == [.different])
        // One tick on three channels at once is one firing of the timer.
        var channels = LooseEvents()
        for t in [Micros(2_000_000), 2_000_100, 2_000_200] { channels.noteRecorded("tick", .timer, at: t) }
        #expect(LooseEvents.firings([2_000_000, 2_000_100, 2_000_200, 4_000_000]) == [2_000_000, 4_000_000])
        #expect(channels.check(recordedSpan: 3_000_000, liveSpan: 3_000_000).isEmpty)
    }

    /// A live peer cannot grow the bookkeeping without bound: names past the limit are
    /// counted under one name.
    @Test func theLooseBookkeepingIsBounded() {
        var events = LooseEvents()
        for i in 0..<(LooseEvents.maxNames + 10) { events.noteLive("client-\(i)", .others, at: Micros(i)) }
        #expect(events.tallies.count == LooseEvents.maxNames + 1)
        #expect(events.tallies.last == LooseTally(event: LooseEvents.overflowName, treatment: .others, recorded: 0, live: 10))
    }
}
