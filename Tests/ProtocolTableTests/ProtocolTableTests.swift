import Bird
import Protocols
import Testing
@testable import ProtocolTable

@Suite struct ProtocolTableTests {
    @Test func specEventsChooseTheEntry() {
        let table = ProtocolTable.standard
        #expect(type(of: table.entry(for: "realtime")).key == "bird")
        #expect(type(of: table.entry(for: "bird")).key == "bird")
        #expect(type(of: table.entry(for: "connection")).key == "websocket")
        #expect(type(of: table.entry(for: "websocket")).key == "websocket")
        #expect(type(of: table.entry(for: "no-such-protocol")).key == "websocket")
        #expect(Set(table.registrations.map(\.key)).count == table.registrations.count)
    }

    @Test func theBirdEntryDecodesAndLearnsItsPrefix() {
        var bird = ProtocolTable.standard.entry(for: "realtime", prefix: nil)
        #expect(bird.dialect == nil)
        let event = bird.decode(Array(#"{"event":"pusher:connection_established","data":"{\"socket_id\":\"1.2\"}"}"#.utf8))
        #expect(event?.kind == .connectionEstablished)
        #expect(event?.socketID == "1.2")
        #expect(bird.dialect == "pusher")
        var fixed = ProtocolTable.standard.entry(for: "realtime", prefix: "bird")
        #expect(fixed.decode(Array(#"{"event":"pusher:ping"}"#.utf8))?.kind == .other)
    }

    @Test func theConnectionLevelEntryDecodesNothing() {
        var plain = ProtocolTable.standard.entry(for: "connection")
        #expect(plain.decode(Array(#"{"event":"bird:ping"}"#.utf8)) == nil)
        var bird = BirdDecoder()
        let event = bird.decode(Array(#"{"event":"bird:ping"}"#.utf8))!
        #expect(plain.adopt(event) == nil)
    }

    @Test func anEventDecodedElsewhereIsClassifiedUnderTheReadersPrefix() {
        var relay = BirdDecoder(prefix: "pusher")
        let carried = relay.decode(Array(#"{"event":"bird:subscribe","data":{"channel":"a"}}"#.utf8))!
        #expect(carried.kind == .other)
        var analyzer = BirdDecoder()
        #expect(analyzer.adopt(carried)?.kind == .subscribe)
        #expect(analyzer.prefix == "bird")
    }
}
