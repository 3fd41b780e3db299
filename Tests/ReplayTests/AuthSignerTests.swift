import Bird
import Capture
import Protocols
import Testing
import WebSocket
@testable import Replay

@Suite struct AuthSignerTests {
    @Test func hmacIsTheStandardOne() {
        // RFC 4231-style known value (Wikipedia's HMAC example).
        #expect(BirdAuth.hmacSHA256Hex(key: "key", message: "The quick brown fox jumps over the lazy dog")
                == "f7bc83f430538424b13298e6aa6fb143ef4d59a14946175997479dbc2d1a3cd8")
    }

    @Test func privatePresenceAndSigninAreResignedOthersLeftAlone() {
        let signer = AuthSigner(secret: "s3cret", wire: BirdDecoder())
        let resigned = String(decoding: signer.resign(Array(Fixture.subscribe.utf8), socketID: "999.1"), as: UTF8.self)
        #expect(resigned == #"{"event":"bird:subscribe","data":{"channel":"private-orders","auth":"key:"# + BirdAuth.hmacSHA256Hex(key: "s3cret", message: "999.1:private-orders") + #""}}"#)
        let presence = #"{"event":"bird:subscribe","data":{"channel":"presence-lobby","auth":"k:00","channel_data":"{\"user_id\":\"7\"}"}}"#
        let signed = FrameMatcher.json(signer.resign(Array(presence.utf8), socketID: "1.2"))
        #expect(signed?["data"]?["auth"]?.stringValue == "k:" + BirdAuth.hmacSHA256Hex(key: "s3cret", message: #"1.2:presence-lobby:{"user_id":"7"}"#))
        let signin = #"{"event":"bird:signin","data":{"auth":"k:00","user_data":"{\"id\":\"7\"}"}}"#
        #expect(FrameMatcher.json(signer.resign(Array(signin.utf8), socketID: "1.2"))?["data"]?["auth"]?.stringValue
                == "k:" + BirdAuth.hmacSHA256Hex(key: "s3cret", message: #"1.2::user::{"id":"7"}"#))
        let publicChannel = #"{"event":"bird:subscribe","data":{"channel":"news"}}"#
        #expect(signer.resign(Array(publicChannel.utf8), socketID: "1.2") == Array(publicChannel.utf8))
    }

    @Test func aClientReplaySignsForTheLiveSocketID() throws {
        var recording = Fixture.conversation()
        recording.serverEnd = nil
        recording.clientEnd = nil
        var replay = ReplayScript(recording, config: ReplayScript.Config(role: .client, wire: .bird, host: "h:1", signer: AuthSigner(secret: "s3cret", wire: BirdDecoder())))
        let out = replay.handle(.connected, now: 0)
        var parser = HTTPHeadParser()
        parser.append(try #require(out.writes.first))
        let request = try #require(try parser.parseRequest())
        _ = replay.handle(.response(WebSocketHandshake.response(accepting: request)), now: 0)
        let live = #"{"event":"bird:connection_established","data":"{\"socket_id\":\"999.1\",\"activity_timeout\":120}"}"#
        _ = replay.handle(.frame(.text(live)), now: 10_000)
        let sent = replay.handle(.timer, now: 50_000).sentFrames
        #expect(sent.count == 1)
        #expect(sent.first.flatMap { FrameMatcher.json($0.payload)?["data"]?["auth"]?.stringValue }
                == "key:" + BirdAuth.hmacSHA256Hex(key: "s3cret", message: "999.1:private-orders"))
    }
}
