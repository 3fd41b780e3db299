import Capture
import Testing
import Vocabulary
import WebSocket
@testable import Replay

/// Every wait of a replay is capped by `--max-gap`, and `--speed` takes only a range in
/// which a replay ends in a sane time.
@Suite struct ReplayTimingTests {
    /// The conversation with the client's subscription a recorded day after the greeting.
    func dayLongGap() -> RecordedConnection {
        var recording = Fixture.conversation()
        let day: Micros = 86_400_000_000
        recording.frames = recording.frames.map { frame in
            var frame = frame
            if frame.t >= 50_000 { frame.t += day }
            return frame
        }
        recording.serverEnd?.t += day
        recording.clientEnd?.t += day
        return recording
    }

    @Test func waitingForAPeerFrameIsCappedByMaxGap() {
        let timing = ReplayTiming(speed: nil, maxGap: 10_000, patience: 5_000_000)
        var replay = ReplayScript(dayLongGap(), config: ReplayScript.Config(role: .server, wire: .bird, timing: timing))
        let opened = replay.handle(.request(Fixture.liveRequest()), now: 100)
        #expect(opened.sentTexts == [Fixture.established])
        // The subscription is due at most 10 ms after the greeting, plus the patience.
        #expect(opened.schedules == [5_010_100])
        let late = replay.handle(.timer, now: 5_010_100)
        #expect(late.deviations.map(\.kind) == [.missing])
    }

    @Test func withoutMaxGapThePeersRecordedGapIsKept() {
        // The peer keeps its own clock: a client's idle ping comes after its timeout
        // whatever our speed, so only --max-gap shortens the wait for it.
        var replay = ReplayScript(dayLongGap(), config: ReplayScript.Config(role: .server, wire: .bird, timing: ReplayTiming(speed: nil)))
        let opened = replay.handle(.request(Fixture.liveRequest()), now: 100)
        #expect(opened.schedules == [100 + 86_400_000_000 + 40_000 + 5_000_000])
    }

    @Test(arguments: ["1", "0.5", "2", "max", "0.01", "10000"])
    func speedsInTheRangeAreAccepted(_ text: String) throws {
        let speed = try ReplayTiming.speed(parsing: text).get()
        #expect(speed == (text == "max" ? nil : Double(text)))
    }

    @Test(arguments: ["5e-324", "0", "-1", "0.0099", "10001", "1e308", "inf", "nan", "fast", ""])
    func speedsOutsideTheRangeAreRefused(_ text: String) {
        guard case .failure(let error) = ReplayTiming.speed(parsing: text) else {
            Issue.record("'\(text)' was accepted")
            return
        }
        #expect(error.description == "expected a number from 0.01 to 10000, or 'max'")
    }
}
