import Capture
import Testing
import WebSocket
@testable import Replay

/// The script playing the client against a live server.
@Suite struct ClientReplayTests {
    func script(_ recording: RecordedConnection = Fixture.conversation()) -> ReplayScript {
        ReplayScript(recording, config: ReplayScript.Config(role: .client, wire: .bird, host: "127.0.0.1:9"))
    }

    /// Connects and completes the handshake with a correct response.
    func open(_ replay: inout ReplayScript) throws {
        let out = replay.handle(.connected, now: 0)
        var parser = HTTPHeadParser()
        parser.append(try #require(out.writes.first))
        let request = try #require(try parser.parseRequest())
        let opened = replay.handle(.response(WebSocketHandshake.response(accepting: request)), now: 1_000)
        #expect(opened.deviations.isEmpty)
    }

    @Test func sendsTheRecordedRequestWithAFreshKey() throws {
        var replay = script()
        let out = replay.handle(.connected, now: 0)
        var parser = HTTPHeadParser()
        parser.append(try #require(out.writes.first))
        let request = try #require(try parser.parseRequest())
        #expect(request.target == "/app/key?protocol=7")
        #expect(request.isWebSocketUpgrade)
        #expect(request.headers.first(named: "Host") == "127.0.0.1:9")
        #expect(request.headers.first(named: "User-Agent") == "BirdRealtime/2.3")
        #expect(request.headers.first(named: "Sec-WebSocket-Key") != "recordedkey==")
        #expect(request.headers.values(named: "Sec-WebSocket-Key").count == 1)
    }

    @Test func aWrongAcceptKeyIsAHandshakeDeviation() {
        var replay = script()
        _ = replay.handle(.connected, now: 0)
        let response = HTTPResponseHead(status: 101, reason: "Switching Protocols", headers: [
            HeaderField("Upgrade", "websocket"), HeaderField("Connection", "Upgrade"), HeaderField("Sec-WebSocket-Accept", "bogus")])
        let out = replay.handle(.response(response), now: 10)
        #expect(out.deviations.map(\.kind) == [.handshake])
        #expect(out.suffix(2) == [.close, .finished])
    }

    @Test func clientFramesWaitForTheServerFramesBeforeThemAndCarryTheLiveSocketID() throws {
        var recording = Fixture.conversation()
        recording.frames = [
            Fixture.text(1, 10_000, .server, Fixture.established),
            Fixture.text(1, 50_000, .client, Fixture.typing),
        ]
        recording.serverEnd = nil
        recording.clientEnd = nil
        var replay = script(recording)
        try open(&replay)
        #expect(replay.handle(.timer, now: 30_000).sentFrames.isEmpty)
        let live = #"{"event":"bird:connection_established","data":"{\"socket_id\":\"999.1\",\"activity_timeout\":120}"}"#
        let greeted = replay.handle(.frame(.text(live)), now: 40_000)
        #expect(greeted.deviations.isEmpty)
        #expect(greeted.schedules == [80_000])
        let sent = replay.handle(.timer, now: 80_000).sentFrames
        #expect(sent.count == 1)
        #expect(sent.first?.isMasked == true)
        #expect(sent.first.map { String(decoding: $0.payload, as: UTF8.self) }
                == #"{"event":"client-typing","channel":"private-orders","data":{"socket_id":"999.1"}}"#)
    }

    @Test func theServersAnswersAreComparedWithTheRecording() throws {
        var replay = script()
        try open(&replay)
        let greeted = replay.handle(.frame(.text(Fixture.established)), now: 9_000)
        #expect(greeted.deviations.isEmpty)
        #expect(replay.handle(.timer, now: 49_000).sentTexts == [Fixture.subscribe])
        let refusal = #"{"event":"bird:subscription_error","channel":"private-orders","data":{"status":403}}"#
        let answer = replay.handle(.frame(.text(refusal)), now: 60_000)
        #expect(answer.deviations.map(\.kind) == [.extra])
        // The server closes with another code than recorded; the success it never sent is
        // missing at once (nothing comes after a close).
        let close = replay.handle(.frame(.close(code: 1000, reason: "")), now: 70_000)
        #expect(close.deviations.map(\.kind) == [.different, .missing])
        #expect(close.deviations.last?.expected == "text bird_internal:subscription_succeeded")
    }
}
