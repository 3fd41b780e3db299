import Capture
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

    @Test func plainTextIsDecodedToNoEventAndNoDecoderMeansNotDecoded() throws {
        var harness = Harness()
        harness.open()
        let plain = harness.server(Wire.fromServer(.text("hello")))
        let record = try #require(plain.frameRecords.first)
        #expect(record.decoded.isDecoded && record.decoded.event == nil)
        var config = RelayConfig(upstreamHost: "upstream.test:9000")
        config.wire = nil
        var quiet = Harness(config: config)
        quiet.open()
        let off = quiet.server(Wire.fromServer(Wire.event("bird:pong")))
        #expect(try #require(off.frameRecords.first).decoded.isDecoded == false)
    }
}
