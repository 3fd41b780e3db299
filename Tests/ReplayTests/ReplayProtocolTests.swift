import Capture
import Protocols
import Testing
import Vocabulary
import WebSocket
@testable import Replay

extension ReplayProtocol {
    /// The Bird/Pusher entry, which the fixtures' frames speak.
    static let bird = ReplayProtocol.named("bird")!
}

/// The replay reads frames only through the protocol table's entry: the event's name and
/// kind decide how a peer frame is treated, so a protocol the replay never heard of gets
/// the same treatment as Bird's events of the same kinds.
@Suite struct ReplayProtocolTests {
    /// A line protocol no module of Faultline knows: `KIND name`, e.g. `relay typing`.
    struct LineProtocol: WireProtocol {
        static let key = "line-test"
        static let summary = "a test's line protocol"
        static let volatileFields = VolatileFields(ignored: ["sig"], mapped: ["session"])
        var dialect: String? { nil }
        mutating func decode(_ payload: [UInt8]) -> RealtimeEvent? {
            let words = String(decoding: payload, as: UTF8.self).split(separator: " ")
            guard words.count == 2 else { return nil }
            let kind: RealtimeEventKind = switch words[0] {
            case "hello": .connectionEstablished
            case "relay": .clientEvent
            case "join": .subscribe
            case "joined": .subscriptionSucceeded
            default: .other
            }
            return RealtimeEvent(name: String(words[1]), channel: nil, dataJSON: nil, kind: kind)
        }
        mutating func adopt(_ event: RealtimeEvent) -> RealtimeEvent? { event }
    }

    static let line = ReplayProtocol(key: LineProtocol.key, reason: "a test") { LineProtocol() }

    @Test func peerFramesAreClassifiedByTheEntrysKindsNotByBirdNames() {
        var recording = Fixture.conversation()
        recording.frames = [
            Fixture.text(1, 10_000, .server, "hello greeting"),
            Fixture.text(1, 50_000, .client, "join room"),
            Fixture.text(1, 60_000, .server, "joined room"),
            Fixture.text(1, 1_100_000, .server, "relay typing"),
            Fixture.text(1, 2_000_000, .server, "push news"),
            Fixture.text(1, 4_000_000, .server, "push news"),
            Fixture.text(1, 6_000_000, .server, "push news"),
        ]
        let classes = PeerFrameClasses.learn(from: [recording], role: .client, wire: Self.line)
        // Another client's event (kind clientEvent) is others'; the server's own pushes,
        // scattered against our frames, are its timer; the handshake and the join's
        // answer are the connection's own exchanges, never classified.
        #expect(classes.others == ["typing"])
        #expect(classes.timer == ["news"])
        #expect(classes.treatment(of: "greeting", kind: .connectionEstablished) == .strict)
        #expect(classes.treatment(of: "room", kind: .subscriptionSucceeded) == .strict)
        // Under Bird's entry the same frames carry no event at all: plain text, all strict.
        let asBird = PeerFrameClasses.learn(from: [recording], role: .client, wire: .bird)
        #expect(asBird.others.isEmpty)
    }

    @Test func theMatchRulesComeFromTheEntry() {
        let options = ReplayRunner.Options(mode: .server(host: "127.0.0.1", port: 0), wire: Self.line)
        #expect(options.rules == MatchRules(ignored: ["sig"], mapped: ["session"]))
        #expect(ReplayRunner.Options(mode: .server(host: "127.0.0.1", port: 0), wire: .bird).rules
                == MatchRules(ignored: ["auth", "channel_data"], mapped: ["socket_id"]))
    }

    @Test func detectionChoosesTheEntryFromTheRecordings() {
        var pusher = Fixture.conversation()
        pusher.frames = [Fixture.text(1, 10_000, .server, Fixture.established)]
        #expect(ReplayProtocol.detect(in: [pusher]).key == "bird")
        var unknown = Fixture.conversation()
        unknown.request = nil
        unknown.frames = [Fixture.text(1, 10_000, .server, "hello greeting")]
        let fallback = ReplayProtocol.detect(in: [unknown])
        #expect(fallback.key == "bird")
        #expect(fallback.reason.hasPrefix("the default"))
    }
}
