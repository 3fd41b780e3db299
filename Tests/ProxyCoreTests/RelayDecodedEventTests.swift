import Capture
import ProtocolTable
import Protocols
import ProxyCore
import Testing
import WebSocket

/// The relay decodes a complete text message's event once, and the record carries it.
@Suite struct RelayDecodedEventTests {
    @Test func aRelayedEventTravelsOnItsRecord() throws {
        var harness = Harness()
        harness.open()
        let down = harness.server(Wire.fromServer(Wire.event("bird:connection_established",
                                                             data: #""{\"socket_id\":\"5.6\"}""#)))
        let record = try #require(down.frameRecords.first)
        let event = try #require(record.decoded.event)
        #expect(event.name == "bird:connection_established")
        #expect(event.kind == .connectionEstablished)
        #expect(event.socketID == "5.6")
        #expect(record.decoded.event(decodedBy: "bird") != nil)
    }

    /// The standard request at a path no entry owns, so that only messages can choose.
    static let neutralRequest = Array(Wire.requestText.replacing("/app/key?protocol=7", with: "/socket").utf8)

    @Test func detectionChoosesTheEntryOnTheFirstClaimedMessageAndRecordsWhy() throws {
        var harness = Harness()
        harness.open(request: Self.neutralRequest)
        // No entry claims plain text: it stays undecoded while detection goes on.
        let plain = harness.server(Wire.fromServer(.text("hello")))
        #expect(try #require(plain.frameRecords.first).decoded.isDecoded == false)
        #expect(plain.notes.isEmpty)
        // A custom prefix's handshake: the Bird/Pusher entry claims it, and learns "acme".
        let handshake = harness.server(Wire.fromServer(Wire.event("acme:connection_established",
                                                                  data: #""{\"socket_id\":\"5.6\"}""#)))
        let handshakeRecord = try #require(handshake.frameRecords.first)
        let event = try #require(handshakeRecord.decoded.event)
        #expect(event.kind == .connectionEstablished)
        #expect(handshake.notes.map(\.message)
                == ["protocol bird: a message is the Pusher-protocol event acme:connection_established"])
        // Once chosen, plain text is decoded (to no event), and nothing more is announced.
        let later = harness.server(Wire.fromServer(.text("hello")))
        let record = try #require(later.frameRecords.first)
        #expect(record.decoded.isDecoded && record.decoded.event == nil)
        #expect(later.notes.isEmpty)
    }

    @Test func theUpgradePathChoosesBeforeAnyMessage() throws {
        var harness = Harness()
        harness.open()  // GET /app/key?protocol=7
        let first = harness.server(Wire.fromServer(.text("hello")))
        #expect(try #require(first.frameRecords.first).decoded.isDecoded)
        #expect(first.notes.map(\.message) == ["protocol bird: the upgrade's path /app/KEY?protocol= is the Pusher protocol's URL"])
    }

    @Test func detectionGivesUpAfterItsMessageLimit() throws {
        var harness = Harness()
        harness.open(request: Self.neutralRequest)
        var notes: [NoteRecord] = []
        for _ in 0..<ProtocolDetector.messageLimit { notes += harness.server(Wire.fromServer(.text("hello"))).notes }
        #expect(notes.count == 1 && notes[0].message.hasPrefix("protocol undetected: "))
        let after = harness.server(Wire.fromServer(Wire.event("bird:pong")))
        #expect(try #require(after.frameRecords.first).decoded.isDecoded == false)
    }

    @Test func aGivenEntryDecodesFromTheStartAndNoneDecodesNothing() throws {
        var config = RelayConfig(upstreamHost: "upstream.test:9000")
        config.protocolChoice = .entry(ProtocolTable.standard.entry(for: "bird"))
        var given = Harness(config: config)
        given.open()
        let plain = given.server(Wire.fromServer(.text("hello")))
        let record = try #require(plain.frameRecords.first)
        #expect(record.decoded.isDecoded && record.decoded.event == nil)
        #expect(plain.notes.isEmpty)
        config.protocolChoice = .none
        var quiet = Harness(config: config)
        quiet.open()
        let off = quiet.server(Wire.fromServer(Wire.event("bird:pong")))
        #expect(try #require(off.frameRecords.first).decoded.isDecoded == false)
    }
}
