import Bird
import Capture
import Testing
@testable import Lifecycle

@Suite struct ChannelRuleTests {
    /// Subscribes to a private and a public channel, drops, reconnects and resubscribes `again`.
    func resubscribeWire(again: [String]) -> Wire {
        var wire = Wire()
        let a = wire.connect(at: 0)
        wire.subscribe(a, at: 1, "private-a", auth: "key:one")
        wire.subscribed(a, at: 1.1, "private-a")
        wire.subscribe(a, at: 1.2, "news")
        wire.subscribed(a, at: 1.3, "news")
        wire.end(a, at: 10)
        let b = wire.connect(at: 10.5)
        for (i, channel) in again.enumerated() {
            wire.subscribe(b, at: 11 + Double(i) * 0.1, channel, auth: channel.hasPrefix("private-") ? "key:two" : nil)
        }
        return wire
    }

    @Test func lostChannelNotResubscribedIsReported() throws {
        let out = try analyze(resubscribeWire(again: ["news"]), end: 30)
        #expect(out.rules() == ["channels.resubscribe"])
        #expect(out.findings.first?.message == "not subscribed again within 10.00 s of connected: private-a")
        #expect(out.findings.first?.conn == 2)
    }

    @Test func allChannelsResubscribedIsClean() throws {
        #expect(try analyze(resubscribeWire(again: ["news", "private-a"]), end: 30).findings.isEmpty)
    }

    @Test func windowNotYetOverIsNotJudged() throws {
        #expect(try analyze(resubscribeWire(again: []), end: 15).findings.isEmpty)
    }

    @Test func unsubscribedChannelIsNotOwed() throws {
        var wire = Wire()
        let a = wire.connect(at: 0)
        wire.subscribe(a, at: 1, "news")
        wire.subscribed(a, at: 1.1, "news")
        wire.client(a, at: 2, #"{"event":"bird:unsubscribe","data":{"channel":"news"}}"#)
        wire.end(a, at: 10)
        wire.connect(at: 10.5)
        #expect(try analyze(wire, end: 30).findings.isEmpty)
    }

    @Test func reusedAuthIsStale() throws {
        var wire = Wire()
        let a = wire.connect(at: 0)
        wire.subscribe(a, at: 1, "private-a", auth: "key:one")
        wire.subscribed(a, at: 1.1, "private-a")
        wire.end(a, at: 10)
        let b = wire.connect(at: 10.5)
        wire.subscribe(b, at: 11, "private-a", auth: "key:one")
        let out = try analyze(wire, end: 15)
        #expect(out.rules() == ["channels.stale-auth"])
        #expect(out.findings.first?.message == "subscribe private-a reuses the auth sent on connection 1")
    }

    @Test func authSignatureCheckedOnlyWithSecret() throws {
        let good = "key:" + BirdAuth.channelSignature(secret: "s3cret", socketID: "1.7", channel: "private-a")
        var wire = Wire()
        let a = wire.connect(at: 0)
        wire.subscribe(a, at: 1, "private-a", auth: good)
        wire.subscribe(a, at: 2, "private-b", auth: "key:deadbeef")
        let out = try analyze(wire, secret: "s3cret", end: 5)
        #expect(out.rules() == ["channels.auth-signature"])
        #expect(out.findings.first?.message == "subscribe private-b: auth is not the signature for socket id 1.7")
        #expect(try analyze(wire, end: 5).findings.isEmpty)
    }

    @Test func signinSignatureChecked() throws {
        let userData = #"{\"id\":\"u1\"}"#
        let sig = BirdAuth.signinSignature(secret: "s", socketID: "1.7", userData: #"{"id":"u1"}"#)
        var wire = Wire()
        let a = wire.connect(at: 0)
        wire.client(a, at: 1, #"{"event":"bird:signin","data":{"auth":"key:\#(sig)","user_data":"\#(userData)"}}"#)
        wire.client(a, at: 2, #"{"event":"bird:signin","data":{"auth":"key:bad","user_data":"\#(userData)"}}"#)
        let out = try analyze(wire, secret: "s", end: 5)
        #expect(out.rules() == ["channels.auth-signature"])
        #expect(out.findings.first?.t == Wire.us(2))
    }

    @Test func signinMustBeRepeatedOnLaterConnections() throws {
        var wire = Wire()
        let a = wire.connect(at: 0)
        wire.client(a, at: 1, #"{"event":"bird:signin","data":{"auth":"k:x","user_data":"{}"}}"#)
        wire.server(a, at: 1.1, #"{"event":"bird:signin_success","data":"{\"user_data\":\"{}\"}"}"#)
        wire.end(a, at: 10)
        wire.connect(at: 10.5)
        let out = try analyze(wire, end: 30)
        #expect(out.rules() == ["signin.repeat"])
        #expect(out.findings.first?.message == "no signin within 10.00 s of connected after signing in on connection 1")
    }

    @Test func repeatedSigninIsClean() throws {
        var wire = Wire()
        let a = wire.connect(at: 0)
        wire.client(a, at: 1, #"{"event":"bird:signin","data":{"auth":"k:x","user_data":"{}"}}"#)
        wire.server(a, at: 1.1, #"{"event":"bird:signin_success","data":"{}"}"#)
        wire.end(a, at: 10)
        let b = wire.connect(at: 10.5)
        wire.client(b, at: 11, #"{"event":"bird:signin","data":{"auth":"k:y","user_data":"{}"}}"#)
        #expect(try analyze(wire, end: 30).findings.isEmpty)
    }

    @Test func clientEventBeforeSubscriptionSucceededIsReported() throws {
        var wire = Wire()
        let a = wire.connect(at: 0)
        wire.subscribe(a, at: 1, "private-a", auth: "k:1")
        wire.client(a, at: 1.05, #"{"event":"client-typing","channel":"private-a","data":{}}"#)
        wire.subscribed(a, at: 1.1, "private-a")
        wire.client(a, at: 1.2, #"{"event":"client-typing","channel":"private-a","data":{}}"#)
        wire.end(a, at: 10)
        let b = wire.connect(at: 10.5)
        wire.client(b, at: 10.6, #"{"event":"client-typing","channel":"private-a","data":{}}"#)
        let out = try analyze(wire, end: 12)
        #expect(out.rules() == ["trigger.unsubscribed", "trigger.unsubscribed"])
        #expect(out.findings.map(\.conn) == [1, 2])
    }
}

@Suite struct ChannelRuleFirstConnectionTests {
    @Test func firstConnectionOwesNothing() throws {
        var wire = Wire()
        let a = wire.connect(at: 0)
        wire.subscribe(a, at: 1, "private-a", auth: "key:one")
        wire.subscribed(a, at: 1.1, "private-a")
        wire.server(a, at: 5, #"{"event":"news","channel":"private-a","data":"{}"}"#)
        #expect(try analyze(wire, end: 30).findings.isEmpty)
        // Lost at the drop, owed by the next connection only, not by the dropped one.
        wire.end(a, at: 20)
        #expect(try analyze(wire, end: 25).findings.isEmpty)
    }
}
