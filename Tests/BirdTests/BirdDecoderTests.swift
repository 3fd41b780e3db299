import JSON
import Protocols
import Testing
@testable import Bird

@Suite struct RealtimeDecoderTests {
    @Test func handshakeDecodesDoubleEncodedDataAndDetectsPrefix() throws {
        var decoder = BirdDecoder()
        let eventDecoded = decoder.decode(#"{"event":"bird:connection_established","data":"{\"socket_id\":\"1234.5678\",\"activity_timeout\":60}"}"#)
        let event = try #require(eventDecoded)
        #expect(decoder.prefix == "bird")
        #expect(event.kind == .connectionEstablished)
        #expect(event.socketID == "1234.5678")
        #expect(event.activityTimeout == 60)
        #expect(event.rawData?.stringValue != nil)
    }

    @Test func givenPrefixIsKeptAndOtherPrefixesAreApplicationEvents() throws {
        var decoder = BirdDecoder(prefix: "pusher")
        let birdDecoded = decoder.decode(#"{"event":"bird:ping","data":{}}"#)
        let bird = try #require(birdDecoded)
        #expect(bird.kind == .other)
        let pingDecoded = decoder.decode(#"{"event":"pusher:ping","data":{}}"#)
        let ping = try #require(pingDecoded)
        #expect(ping.kind == .ping)
        #expect(decoder.prefix == "pusher")
    }

    @Test func subscribeFieldsAndInternalEvents() throws {
        var decoder = BirdDecoder(prefix: "bird")
        let subDecoded = decoder.decode(#"{"event":"bird:subscribe","data":{"channel":"presence-room","auth":"key:abc","channel_data":"{\"user_id\":\"1\"}"}}"#)
        let sub = try #require(subDecoded)
        #expect(sub.kind == .subscribe)
        #expect(sub.targetChannel == "presence-room")
        #expect(sub.auth == "key:abc")
        #expect(sub.channelData == #"{"user_id":"1"}"#)
        let okDecoded = decoder.decode(#"{"event":"bird_internal:subscription_succeeded","channel":"presence-room","data":"{}"}"#)
        let ok = try #require(okDecoded)
        #expect(ok.kind == .subscriptionSucceeded)
        #expect(ok.targetChannel == "presence-room")
        let signinDecoded = decoder.decode(#"{"event":"bird:signin","data":{"auth":"k:s","user_data":"{\"id\":\"u\"}"}}"#)
        let signin = try #require(signinDecoded)
        #expect(signin.kind == .signin)
        #expect(signin.userData == #"{"id":"u"}"#)
        let clientDecoded = decoder.decode(#"{"event":"client-typing","channel":"private-a","data":{}}"#)
        let client = try #require(clientDecoded)
        #expect(client.kind == .clientEvent)
        let errorEventDecoded = decoder.decode(#"{"event":"bird:error","data":{"message":"x","code":4009}}"#)
        let errorEvent = try #require(errorEventDecoded)
        #expect(errorEvent.errorCode == 4009)
    }

    @Test func nonEventsStayPlainFrames() {
        var decoder = BirdDecoder()
        #expect(decoder.decode("hello") == nil)
        #expect(decoder.decode("[1,2]") == nil)
        #expect(decoder.decode(#"{"event":3}"#) == nil)
        #expect(decoder.decode(#"{"event":"x:connection_established""#) == nil)
        #expect(decoder.prefix == nil)
        _ = decoder.decode(#"{"event":"news","channel":"a:b","data":{}}"#)
        #expect(decoder.prefix == nil)
        _ = decoder.decode(#"{"event":"pusher:subscribe","data":{"channel":"a"}}"#)
        #expect(decoder.prefix == "pusher")
    }
}

@Suite struct BirdAuthTests {
    /// The example from Pusher's channel authorization documentation.
    @Test func privateChannelSignatureMatchesPusherExample() {
        let sig = BirdAuth.channelSignature(secret: "7ad3773142a6692b25b8", socketID: "1234.1234", channel: "private-foobar")
        #expect(sig == "58df8b0c36d6982b82c3ecf6b4662e34fe8c25bba48f5369f135bf843651c3a4")
    }

    /// RFC 4231 test case 2.
    @Test func hmacMatchesRFC4231() {
        #expect(BirdAuth.hmacSHA256Hex(key: "Jefe", message: "what do ya want for nothing?")
            == "5bdcc146bf60754e6a042426089575c75a003f089d2739839dec58b964ec3843")
    }

    @Test func signinAndPresenceBindSocketID() {
        let a = BirdAuth.signinSignature(secret: "s", socketID: "1.1", userData: "{}")
        let b = BirdAuth.signinSignature(secret: "s", socketID: "1.2", userData: "{}")
        #expect(a != b && a.count == 64)
        let p = BirdAuth.channelSignature(secret: "s", socketID: "1.1", channel: "presence-x", channelData: "{}")
        #expect(p == BirdAuth.hmacSHA256Hex(key: "s", message: "1.1:presence-x:{}"))
        #expect(BirdAuth.signature(ofAuth: "key:abc") == "abc")
    }
}
