import Phoenix
import Protocols
import Testing

/// The Phoenix entry's decoding of both serializers onto the event kinds, and its claims.
@Suite struct PhoenixProtocolTests {
    private func decode(_ texts: [String]) -> [RealtimeEvent?] {
        var entry = PhoenixProtocol()
        return texts.map { entry.decode(Array($0.utf8)) }
    }

    @Test func v2JoinReplyHeartbeatAndEvents() {
        let events = decode([
            #"["1","1","room:lobby","phx_join",{"token":"t"}]"#,
            #"["1","1","room:lobby","phx_reply",{"status":"ok","response":{}}]"#,
            #"[null,"2","phoenix","heartbeat",{}]"#,
            #"[null,"2","phoenix","phx_reply",{"status":"ok","response":{}}]"#,
            #"["1","3","room:lobby","new_msg",{"body":"hi"}]"#,
            #"["1","3","room:lobby","phx_reply",{"status":"ok","response":{}}]"#,
            #"["1",null,"room:lobby","tick",{"n":1}]"#,
            #"["1","1","room:lobby","phx_error",{}]"#,
            #"["4","4","room:private","phx_join",{}]"#,
            #"["4","4","room:private","phx_reply",{"status":"error","response":{"reason":"unauthorized"}}]"#,
            #"["1","5","room:lobby","phx_leave",{}]"#,
            #"["1","1","room:lobby","phx_close",{}]"#,
        ])
        #expect(events.map { $0?.kind } == [
            .subscribe, .subscriptionSucceeded, .ping, .pong, .clientEvent, .other, .other, .error,
            .subscribe, .subscriptionError, .unsubscribe, .unsubscribe,
        ])
        #expect(events[0]?.channel == "room:lobby")
        #expect(events[0]?.targetChannel == "room:lobby")
        #expect(events[2]?.ref == "2")
        #expect(events[3]?.ref == "2")
        #expect(events[4]?.dataMember("body")?.stringValue == "hi")
        #expect(events[9]?.channel == "room:private")
    }

    @Test func v1ObjectsMatchJoinRepliesByTopicAndRef() {
        var entry = PhoenixProtocol()
        let join = entry.decode(Array(#"{"topic":"room:1","event":"phx_join","payload":{},"ref":"7"}"#.utf8))
        let pushReply = entry.decode(Array(#"{"topic":"room:1","event":"phx_reply","payload":{"status":"ok","response":{}},"ref":"6"}"#.utf8))
        let joinReply = entry.decode(Array(#"{"topic":"room:1","event":"phx_reply","payload":{"status":"ok","response":{}},"ref":"7"}"#.utf8))
        let heartbeat = entry.decode(Array(#"{"topic":"phoenix","event":"heartbeat","payload":{},"ref":8}"#.utf8))
        let broadcast = entry.decode(Array(#"{"topic":"room:1","event":"shout","payload":{"a":1},"ref":null}"#.utf8))
        #expect(join?.kind == .subscribe)
        #expect(pushReply?.kind == .other)
        #expect(joinReply?.kind == .subscriptionSucceeded)
        #expect(heartbeat?.kind == .ping)
        #expect(heartbeat?.ref == "8")
        #expect(broadcast?.kind == .other)
        #expect(entry.dialect == nil)
    }

    @Test func v1EscapedKeysGoThroughTheParser() {
        var entry = PhoenixProtocol()
        let event = entry.decode(Array(#"{"top\u0069c":"phoenix","event":"heartbeat","payload":{},"ref":"3"}"#.utf8))
        #expect(event?.kind == .ping)
        #expect(event?.ref == "3")
    }

    @Test func notPhoenixMessagesDecodeToNil() {
        let events = decode([
            #"{"event":"pusher:ping","data":{}}"#,
            #"["1","1","room","phx_join"]"#,
            #"[1,2,3,4,5]"#,
            #"["1",{},"room","x",{}]"#,
            #"["1","1","room","x",{}"#,
            "2probe",
            "",
        ])
        #expect(events.allSatisfy { $0 == nil })
    }

    @Test func adoptLearnsJoinsSoV1RepliesMatch() {
        var relay = PhoenixProtocol()
        var analyzer = PhoenixProtocol()
        let join = relay.decode(Array(#"{"topic":"r","event":"phx_join","payload":{},"ref":"1"}"#.utf8))!
        _ = analyzer.adopt(join)
        let reply = analyzer.decode(Array(#"{"topic":"r","event":"phx_reply","payload":{"status":"ok"},"ref":"1"}"#.utf8))
        #expect(reply?.kind == .subscriptionSucceeded)
    }

    @Test func claimsTheSocketURLAndFirstMessages() {
        #expect(PhoenixProtocol.claim(upgrade: UpgradeEvidence(target: "/socket/websocket?vsn=2.0.0&token=x")) != nil)
        #expect(PhoenixProtocol.claim(upgrade: UpgradeEvidence(target: "/socket/websocket")) == nil)
        #expect(PhoenixProtocol.claim(upgrade: UpgradeEvidence(target: "/app/key?protocol=7")) == nil)
        #expect(PhoenixProtocol.claim(message: Array(#"[null,"1","phoenix","heartbeat",{}]"#.utf8)) != nil)
        #expect(PhoenixProtocol.claim(message: Array(#"{"topic":"room:a","event":"phx_join","payload":{},"ref":"1"}"#.utf8)) != nil)
        #expect(PhoenixProtocol.claim(message: Array(#"["1","2","room:a","new_msg",{}]"#.utf8)) == nil)
        #expect(PhoenixProtocol.claim(message: Array(#"{"event":"pusher:connection_established","data":"{}"}"#.utf8)) == nil)
    }

    @Test func encodesBothSerializers() {
        let v2 = PhoenixMessage(joinRef: "1", ref: nil, topic: "room:\"x\"", event: "tick", payload: Array("{}".utf8)[...],
                                serializer: .v2)
        #expect(String(decoding: v2.encoded(), as: UTF8.self) == #"["1",null,"room:\"x\"","tick",{}]"#)
        #expect(PhoenixMessage.parse(v2.encoded()) == v2)
        var v1 = v2
        v1.serializer = .v1
        #expect(PhoenixMessage.parse(v1.encoded())?.topic == "room:\"x\"")
        #expect(PhoenixMessage.parse(v1.encoded())?.joinRef == "1")
    }
}
