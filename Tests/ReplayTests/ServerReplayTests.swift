import Capture
import Testing
import WebSocket
@testable import Replay

/// The script playing the server against a live client, driven by hand with a fake clock.
@Suite struct ServerReplayTests {
    func script(_ recording: RecordedConnection = Fixture.conversation()) -> ReplayScript {
        ReplayScript(recording, config: ReplayScript.Config(role: .server, wire: .bird))
    }

    @Test func answersTheUpgradeAsRecordedWithAFreshAcceptKey() throws {
        var replay = script()
        let out = replay.handle(.request(Fixture.liveRequest()), now: 100)
        let head = String(decoding: try #require(out.writes.first), as: UTF8.self)
        #expect(head.hasPrefix("HTTP/1.1 101 Switching Protocols\r\n"))
        #expect(head.contains("Sec-WebSocket-Accept: s3pPLMBiTxaQ9kYGzzhZRbK+xOo=\r\n"))
        #expect(head.contains("X-Server: bird\r\n"))
        #expect(!head.contains("recordedaccept"))
        // The greeting keeps its recorded gap after the handshake (10 ms - 2 ms).
        #expect(out.schedules == [8_100])
        #expect(out.sentFrames.isEmpty)
    }

    @Test func aResponseWaitsForTheClientFrameBeforeIt() {
        var replay = script()
        _ = replay.handle(.request(Fixture.liveRequest()), now: 100)
        let greeting = replay.handle(.timer, now: 8_100)
        #expect(greeting.sentTexts == [Fixture.established])
        // The subscription answer is not due on the clock: nothing goes out while waiting.
        let idle = replay.handle(.timer, now: 2_000_000)
        #expect(idle.sentFrames.isEmpty)
        #expect(idle.deviations.isEmpty)
        // The client subscribes late (another auth signature: ignored); the answer follows
        // after the recorded 10 ms.
        let subscribe = #"{"event":"bird:subscribe","data":{"channel":"private-orders","auth":"key:ffff"}}"#
        let after = replay.handle(.frame(Fixture.clientFrame(subscribe)), now: 3_000_000)
        #expect(after.deviations.isEmpty)
        #expect(after.schedules == [3_010_000])
        #expect(replay.handle(.timer, now: 3_010_000).sentTexts == [Fixture.succeeded])
        // Then the close, one recorded second later, with its code and reason.
        let close = replay.handle(.timer, now: 4_010_000)
        #expect(close.sentFrames == [Frame.close(code: 4009, reason: "terminated")])
        // The client's close reply arrives; the recorded FIN follows 10 ms after it.
        let reply = replay.handle(.frame(Frame.close(code: 4009, reason: "terminated", maskingKey: MaskingKey(9, 9, 9, 9))), now: 4_020_000)
        #expect(reply.deviations.isEmpty)
        #expect(reply.schedules == [4_030_000])
        let fin = replay.handle(.timer, now: 4_030_000)
        #expect(fin.contains(.shutdown))
        #expect(!fin.isFinished)
        let end = replay.handle(.peerEnded(.fin), now: 4_031_000)
        #expect(end == [.close, .finished])
        #expect(replay.isFinished)
    }

    @Test func aClientFrameThatNeverComesIsMissingAndTheScriptGoesOn() {
        var replay = script()
        _ = replay.handle(.request(Fixture.liveRequest()), now: 100)
        let greeting = replay.handle(.timer, now: 8_100)
        // Deadline: the recorded 40 ms after the greeting plus 5 s of patience.
        #expect(greeting.schedules == [5_048_100])
        let late = replay.handle(.timer, now: 5_048_100)
        #expect(late.deviations.map(\.kind) == [.missing])
        #expect(late.deviations.first?.expected == "text bird:subscribe")
        #expect(late.schedules == [5_058_100])
        #expect(replay.handle(.timer, now: 5_058_100).sentTexts == [Fixture.succeeded])
    }

    @Test func wrongExtraAndReorderedClientFramesAreReported() {
        var recording = Fixture.conversation()
        recording.frames.insert(Fixture.text(1, 55_000, .client, #"{"event":"client-typing","channel":"private-orders","data":{}}"#), at: 2)
        var replay = script(recording)
        _ = replay.handle(.request(Fixture.liveRequest()), now: 0)
        _ = replay.handle(.timer, now: 8_000)
        // Typing before subscribing: another order.
        let typing = replay.handle(.frame(Fixture.clientFrame(#"{"event":"client-typing","channel":"private-orders","data":{}}"#)), now: 9_000)
        #expect(typing.deviations.map(\.kind) == [.otherOrder])
        // Subscribing to another channel: different, with the path.
        let other = replay.handle(.frame(Fixture.clientFrame(#"{"event":"bird:subscribe","data":{"channel":"presence-x"}}"#)), now: 10_000)
        #expect(other.deviations.map(\.kind) == [.different])
        #expect(other.deviations.first?.details == [#"data.channel: "presence-x" (recorded "private-orders")"#])
        // Something never recorded: extra.
        let extra = replay.handle(.frame(Fixture.clientFrame(#"{"event":"bird:signin","data":{}}"#)), now: 11_000)
        #expect(extra.deviations.map(\.kind) == [.extra])
        #expect(extra.deviations.first?.observed == "text bird:signin")
    }

    @Test func withoutARecordedEndTheServerClosesAfterTheCloseHandshake() {
        var recording = Fixture.conversation()
        recording.serverEnd = nil
        recording.clientEnd = nil
        var replay = script(recording)
        _ = replay.handle(.request(Fixture.liveRequest()), now: 0)
        _ = replay.handle(.timer, now: 8_000)
        _ = replay.handle(.frame(Fixture.clientFrame(Fixture.subscribe)), now: 48_000)
        _ = replay.handle(.timer, now: 58_000)
        #expect(replay.handle(.timer, now: 1_058_000).sentFrames.map(\.opcode) == [.close])
        let reply = replay.handle(.frame(Frame.close(code: 4009, reason: "terminated", maskingKey: MaskingKey(1, 1, 1, 1))), now: 1_060_000)
        #expect(reply.deviations.isEmpty)
        #expect(reply.suffix(2) == [.close, .finished])
    }

    @Test func aCloseFromTheClientGivesUpOnItsEarlierFramesAtOnce() {
        var replay = script()
        _ = replay.handle(.request(Fixture.liveRequest()), now: 0)
        _ = replay.handle(.timer, now: 8_000)
        // The client closes without subscribing: the subscribe is missing now, not after 5 s.
        let out = replay.handle(.frame(Frame.close(code: 4009, reason: "terminated", maskingKey: MaskingKey(1, 1, 1, 1))), now: 9_000)
        #expect(out.deviations.map(\.kind) == [.otherOrder, .missing])
        #expect(out.deviations.last?.expected == "text bird:subscribe")
    }

    @Test func pingsAreAnsweredLiveAndNotCompared() {
        var replay = script()
        _ = replay.handle(.request(Fixture.liveRequest()), now: 0)
        let out = replay.handle(.frame(Frame(opcode: .ping, maskingKey: MaskingKey(1, 1, 1, 1), payload: [7, 7])), now: 1_000)
        #expect(out.sentFrames == [Frame(opcode: .pong, payload: [7, 7])])
        #expect(out.deviations.isEmpty)
    }

    @Test func aRecordedResetIsReplayedAsAReset() {
        var recording = Fixture.conversation()
        recording.frames = [Fixture.text(1, 10_000, .server, Fixture.established)]
        recording.serverEnd = RecordedEnding(kind: .reset, t: 30_000)
        recording.clientEnd = nil
        var replay = script(recording)
        _ = replay.handle(.request(Fixture.liveRequest()), now: 0)
        _ = replay.handle(.timer, now: 8_000)
        #expect(replay.handle(.timer, now: 28_000) == [.reset, .finished])
    }

    @Test func aRecordedRefusalIsRefusedAgain() throws {
        var recording = Fixture.conversation()
        recording.response = Fixture.response(status: 503)
        var replay = script(recording)
        let out = replay.handle(.request(Fixture.liveRequest()), now: 0)
        let head = String(decoding: try #require(out.writes.first), as: UTF8.self)
        #expect(head.hasPrefix("HTTP/1.1 503 Service Unavailable\r\n"))
        #expect(head.contains("Content-Length: 0\r\n"))
        #expect(out.suffix(2) == [.close, .finished])
    }

    @Test func aClientThatResetsInsteadOfClosingIsADifferentEnd() {
        var replay = script()
        _ = replay.handle(.request(Fixture.liveRequest()), now: 0)
        _ = replay.handle(.timer, now: 8_000)
        let out = replay.handle(.peerEnded(.reset), now: 20_000)
        #expect(out.deviations.map(\.kind) == [.missing, .missing, .differentEnd])
        #expect(out.deviations.last?.observed == "TCP RST")
        #expect(out.suffix(2) == [.close, .finished])
    }

    @Test func speedAndMaxGapScaleTheRecordedGaps() {
        #expect(ReplayTiming(speed: 2).delay(1_000_000) == 500_000)
        #expect(ReplayTiming(speed: nil).delay(9_000_000) == 0)
        #expect(ReplayTiming(speed: 1, maxGap: 1_000_000).delay(30_000_000) == 1_000_000)
        #expect(ReplayTiming(speed: 4, maxGap: 1_000_000).delay(30_000_000) == 250_000)
        #expect(ReplayTiming().delay(-5) == 0)
    }
}
