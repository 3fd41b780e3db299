import Capture
import Protocols
import Testing
import TestSupport
import Vocabulary
import WebSocket
@testable import Replay

/// A replay treats the live peer's frames by the kinds the protocol table's entry gives
/// their events, through the entry detected on the recording: the same conversation in
/// Phoenix Channels, in Bird's dialect and in a custom-prefix Pusher dialect gets the same
/// classes, and each connection of a mixed capture is read by its own pack.
@Suite struct ReplayByKindTests {
    /// One conversation, as the client recorded it: the handshake and a join (the
    /// connection's own exchanges), a heartbeat and its answer, the server's `tick` on its
    /// own timer at scattered lags, another client's arrival, and `shout`, the server's
    /// answer to our `ask`.
    struct Conversation {
        var path: String
        var frames: [(Micros, Side, String)]
    }

    static func recording(_ conversation: Conversation) -> RecordedConnection {
        var request = Fixture.request()
        request.target = conversation.path
        var recording = Fixture.conversation()
        recording.request = request
        recording.frames = conversation.frames.map { Fixture.text(1, $0.0, $0.1, $0.2) }
        return recording
    }

    static func pusher(prefix: String) -> Conversation {
        let tick = #"{"event":"tick","channel":"presence-lobby","data":"{}"}"#
        return Conversation(path: "/app/key?protocol=7", frames: [
            (10_000, .server, #"{"event":"\#(prefix):connection_established","data":"{\"socket_id\":\"1.2\",\"activity_timeout\":120}"}"#),
            (20_000, .client, #"{"event":"\#(prefix):subscribe","data":{"channel":"presence-lobby"}}"#),
            (30_000, .server, #"{"event":"\#(prefix)_internal:subscription_succeeded","channel":"presence-lobby","data":"{}"}"#),
            (1_000_000, .client, #"{"event":"\#(prefix):ping","data":{}}"#),
            (1_005_000, .server, #"{"event":"\#(prefix):pong","data":{}}"#),
            (2_000_000, .server, tick), (4_300_000, .server, tick), (6_100_000, .server, tick),
            (6_500_000, .server, #"{"event":"\#(prefix)_internal:member_added","channel":"presence-lobby","data":"{\"user_id\":\"7\"}"}"#),
            (7_000_000, .client, #"{"event":"client-ask","channel":"presence-lobby","data":{}}"#),
            (7_020_000, .server, #"{"event":"shout","channel":"presence-lobby","data":"{}"}"#),
        ])
    }

    /// Phoenix has no presence arrival in its kinds: a broadcast is the server's own.
    static let phoenix = Conversation(path: "/socket/websocket?vsn=2.0.0", frames: [
        (20_000, .client, #"["1","1","room:lobby","phx_join",{}]"#),
        (30_000, .server, #"["1","1","room:lobby","phx_reply",{"status":"ok","response":{}}]"#),
        (1_000_000, .client, #"[null,"2","phoenix","heartbeat",{}]"#),
        (1_005_000, .server, #"[null,"2","phoenix","phx_reply",{"status":"ok","response":{}}]"#),
        (2_000_000, .server, #"[null,null,"room:lobby","tick",{}]"#),
        (4_300_000, .server, #"[null,null,"room:lobby","tick",{}]"#),
        (6_100_000, .server, #"[null,null,"room:lobby","tick",{}]"#),
        (7_000_000, .client, #"["1","3","room:lobby","ask",{}]"#),
        (7_020_000, .server, #"[null,null,"room:lobby","shout",{}]"#),
    ])

    @Test func theSameConversationGetsTheSameClassesInEveryDialectAndPack() {
        var classes: [String: PeerFrameClasses] = [:]
        for (name, conversation, key) in [("bird", Self.pusher(prefix: "bird"), "bird"),
                                          ("myapp", Self.pusher(prefix: "myapp"), "bird"),
                                          ("phoenix", Self.phoenix, "phoenix")] {
            let recording = Self.recording(conversation)
            let wire = ReplayProtocol.detect(in: [recording])
            #expect(wire.key == key, "\(name): \(wire.reason)")
            classes[name] = PeerFrameClasses.learn(from: [recording], role: .client, wire: wire)
        }
        // The server's timer event is its timer's; the answer to our frame stays strict.
        for (name, learnt) in classes {
            #expect(learnt.timer == ["tick"], "\(name)")
            #expect(learnt.treatment(of: "shout", kind: .other) == .strict, "\(name)")
        }
        // Another client's arrival is others' under the dialect's own spelling of it.
        #expect(classes["bird"]?.others == ["bird_internal:member_added"])
        #expect(classes["myapp"]?.others == ["myapp_internal:member_added"])
        #expect(classes["phoenix"]?.others == [])
        // The connection's own exchanges are never classified, whatever they are called.
        #expect(classes["myapp"]?.treatment(of: "myapp:pong", kind: .pong) == .strict)
        #expect(classes["phoenix"]?.treatment(of: "phx_reply", kind: .pong) == .strict)
        // A live frame of a kind another client causes is others' in any spelling.
        #expect(classes["myapp"]?.treatment(of: "myapp_internal:member_removed", kind: .memberRemoved) == .others)
    }

    /// Captures/mixed-protocols.jsonl: a Bird sim client, python-socketio, gql and pysignalr
    /// through one proxy. Each recorded connection is read by the pack detected on it.
    @Test func eachConnectionOfAMixedCaptureIsReadByItsOwnPack() throws {
        let path = TestEnvironment.path("Captures/mixed-protocols.jsonl")
        let recordings = try ReplayLoader.load({ try CaptureReader(path: path) }, selection: .allClients)
        let shared = ReplayProtocol.detect(in: recordings)
        #expect(shared.key == "bird")
        let own = ReplayProtocol.detectEach(in: recordings, shared: shared)
        let keys = recordings.map { (own[$0.conn] ?? shared).key }
        #expect(keys == ["bird", "socketio", "graphql-ws", "graphql-ws", "signalr"], "\(own.mapValues(\.reason))")
        // The runner gives each connection its entry, that entry's volatile fields and a
        // signer through it.
        var options = ReplayRunner.Options(mode: .client(host: "127.0.0.1", port: 9, target: nil, copies: 1), wire: shared,
                                           signer: AuthSigner(secret: "s3cret", wire: shared.instance()))
        options.wires = own
        #expect(options.wire(for: recordings[0]).wire.key == "bird")
        let socketIO = options.wire(for: recordings[1])
        #expect(socketIO.wire.key == "socketio")
        #expect(socketIO.rules.ignored.isSuperset(of: options.rules.ignored))
        #expect(socketIO.signer.map { type(of: $0.wire).key } == "socketio" && socketIO.signer?.secret == "s3cret")
    }
}
