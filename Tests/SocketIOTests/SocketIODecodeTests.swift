import JSON
import Protocols
import Testing
@testable import SocketIO

/// What the Socket.IO entry makes of each engine.io v4 / socket.io v5 packet, with the
/// packets python-socketio 5.18 and its server send (as recorded through the proxy).
@Suite struct SocketIODecodeTests {
    func decode(_ text: String) -> RealtimeEvent? {
        let entry = SocketIOProtocol()
        return entry.decode(Array(text.utf8))
    }

    @Test func theOpenPacketIsTheHandshakeWithItsSidAndPingSchedule() throws {
        let open = try #require(decode(#"0{"sid":"cEWnnDEhDX5bIJvjAAAB","upgrades":[],"pingTimeout":500,"pingInterval":1000,"maxPayload":1000000}"#))
        #expect(open.kind == .connectionEstablished)
        #expect(open.name == "open")
        #expect(open.socketID == "cEWnnDEhDX5bIJvjAAAB")
        #expect(open.liveness == AnnouncedLiveness(pingInterval: 1, pingTimeout: 0.5))
        // The event's raw data is the packet's own object.
        #expect(open.rawData?["sid"]?.stringValue == "cEWnnDEhDX5bIJvjAAAB")
        #expect(open.rawData?["socket_id"] == nil)
        // No sid: a handshake without a socket id (what server.handshake-missing-id reports).
        let bare = try #require(decode(#"0{"pingTimeout":500,"pingInterval":1000}"#))
        #expect(bare.kind == .connectionEstablished && bare.socketID == nil)
        // A hostile ping schedule is clamped to a day, never an overflow.
        #expect(decode(#"0{"sid":"a","pingInterval":1e300,"pingTimeout":-5}"#)?.liveness
                == AnnouncedLiveness(pingInterval: 86_400, pingTimeout: 0))
        #expect(decode(#"0{"sid":"a","pingInterval":"x","pingTimeout":1}"#)?.liveness == nil)
        #expect(decode("0not json") == nil)
    }

    @Test func pingsPongsAndTheOtherEngineIOPackets() {
        #expect(decode("2")?.kind == .ping)
        #expect(decode("3")?.kind == .pong)
        #expect(decode("2probe")?.kind == .ping)
        #expect(decode("1")?.name == "close")
        #expect(decode("1")?.kind == .other)
        #expect(decode("6")?.name == "noop")
        #expect(decode("5")?.name == "upgrade")
        #expect(decode("7") == nil)
        #expect(decode("") == nil)
        #expect(decode(#"{"event":"bird:ping"}"#) == nil)
    }

    @Test func namespaceConnectsAreSubscribesAndTheirAnswers() throws {
        let connect = try #require(decode("40"))
        #expect(connect.kind == .subscribe && connect.channel == "/" && connect.targetChannel == "/")
        // The client's auth is the app's: kept out of the event.
        let withAuth = try #require(decode(#"40/admin,{"token":"s3cret","channel":"x"}"#))
        #expect(withAuth.kind == .subscribe && withAuth.targetChannel == "/admin" && withAuth.rawData == nil)
        let answer = try #require(decode(#"40{"sid":"z9y8"}"#))
        #expect(answer.kind == .subscriptionSucceeded && answer.targetChannel == "/")
        #expect(decode(#"40/chat,{"sid":"z9y8"}"#)?.targetChannel == "/chat")
        let refused = try #require(decode(#"44/admin,{"message":"Not authorized"}"#))
        #expect(refused.kind == .subscriptionError && refused.name == "connect_error" && refused.channel == "/admin")
        let left = try #require(decode("41"))
        #expect(left.kind == .unsubscribe && left.channel == "/" && left.name == "disconnect")
        #expect(decode("41/chat,")?.channel == "/chat")
    }

    @Test func eventsAreClientEventsOnTheirNamespaceNamedAsSent() throws {
        let event = try #require(decode(#"42["chat message",{"text":"hi"}]"#))
        #expect(event.kind == .clientEvent && event.name == "chat message" && event.channel == "/" && event.ref == nil)
        let asking = try #require(decode(#"42/chat,17["join",1]"#))
        #expect(asking.name == "join" && asking.channel == "/chat" && asking.ref == "17")
        let ack = try #require(decode(#"43/chat,17[true]"#))
        #expect(ack.kind == .other && ack.name == "ack" && ack.ref == "17")
        #expect(decode(#"42["caf\u00e9"]"#)?.name == "café")
        #expect(decode(#"42[ "spaced" ]"#)?.name == "spaced")
        // Binary events: recognized by name; their attachments come as binary messages.
        let binary = try #require(decode(#"451-["upload",{"_placeholder":true,"num":0}]"#))
        #expect(binary.name == "upload" && binary.kind == .other)
        #expect(decode(#"461-/chat,3[{"_placeholder":true,"num":0}]"#)?.ref == "3")
        // Not socket.io packets: no event rather than a guess.
        #expect(decode("42") == nil)
        #expect(decode(#"42[1,2]"#) == nil)
        #expect(decode(#"42["unterminated"#) == nil)
        #expect(decode(#"45["no count"]"#) == nil)
        #expect(decode("4" + String(repeating: "2", count: 40) + "[\"x\"]") == nil)
        #expect(decode("40/" + String(repeating: "n", count: 300) + ",") == nil)
    }

    @Test func adoptKeepsTheCarriedEvent() throws {
        let event = try #require(decode(#"42["tick",{}]"#))
        let reader = SocketIOProtocol()
        #expect(reader.adopt(event) == event)
    }

    @Test func handshakeFaultsRewriteTheOpenPacket() throws {
        let payload = Array(#"0{"sid":"abc","upgrades":[],"pingTimeout":500,"pingInterval":1000}"#.utf8)
        let entry = SocketIOProtocol()
        let decoder = SocketIOProtocol()
        let open = try #require(decoder.decode(payload))
        let stripped = try #require(entry.rewriteHandshake(payload, event: open, .removeSocketID))
        #expect(stripped.previous == "abc")
        #expect(String(decoding: stripped.payload, as: UTF8.self) == #"0{"upgrades":[],"pingTimeout":500,"pingInterval":1000}"#)
        #expect(decoder.decode(stripped.payload)?.socketID == nil)
        let slower = try #require(entry.rewriteHandshake(payload, event: open, .activityTimeout(seconds: 7)))
        #expect(slower.previous == "1000")
        #expect(decoder.decode(slower.payload)?.liveness == AnnouncedLiveness(pingInterval: 7, pingTimeout: 0.5))
        let ping = try #require(decoder.decode(Array("2".utf8)))
        #expect(entry.rewriteHandshake(Array("2".utf8), event: ping, .removeSocketID) == nil)
    }
}
