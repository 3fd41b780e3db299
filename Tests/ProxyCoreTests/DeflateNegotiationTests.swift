import Capture
import Faults
import Testing
import Vocabulary
import WebSocket
@testable import ProxyCore

/// The relay's rewrite of the permessage-deflate negotiation when faults may drop messages
/// (`RelaySession+Deflate`, RFC 7692 7.1.1), with scripted heads: the real-peer side is in
/// EndToEndTests/DeflateDropTests.
@Suite("permessage-deflate negotiation under faults")
struct DeflateNegotiationTests {
    static func faulted() throws -> Harness {
        Harness(faults: FaultEngine(rules: [try FaultRule.parse("drop-message,dir=s2c")]))
    }

    static func head(_ bytes: [UInt8]) -> String { String(decoding: bytes, as: UTF8.self) }

    @Test("with faults, the offer sent upstream asks for no context takeover both ways, and a note says so")
    func offerRewritten() throws {
        var harness = try Self.faulted()
        harness.client(Wire.request)
        let sent = Self.head(harness.handle(.upstreamConnected).sent(to: .server))
        #expect(sent.contains("Sec-WebSocket-Extensions: permessage-deflate; client_max_window_bits; "
                              + "server_no_context_takeover; client_no_context_takeover\r\n"), "\(sent)")
        #expect(harness.log.notes.contains { $0.message.hasPrefix("permessage-deflate: asked the upstream") })
        // The client's request is recorded as the client sent it.
        #expect(harness.log.upgrades.first?.header("Sec-WebSocket-Extensions") == "permessage-deflate; client_max_window_bits")
    }

    @Test("without faults the offer and the 101 pass unchanged")
    func untouchedWithoutFaults() {
        var harness = Harness()
        harness.client(Wire.request)
        let sent = Self.head(harness.handle(.upstreamConnected).sent(to: .server))
        #expect(sent.contains("Sec-WebSocket-Extensions: permessage-deflate; client_max_window_bits\r\n"), "\(sent)")
        let response = Wire.response101(extra: "Sec-WebSocket-Extensions: permessage-deflate\r\n")
        #expect(harness.server(response).sent(to: .client) == response)
        #expect(!harness.log.notes.contains { $0.message.hasPrefix("permessage-deflate") })
    }

    @Test("a 101 without client_no_context_takeover gets it added for the client, noted")
    func responseRewritten() throws {
        var harness = try Self.faulted()
        harness.client(Wire.request)
        harness.handle(.upstreamConnected)
        let response = Wire.response101(extra: "Sec-WebSocket-Extensions: permessage-deflate; server_no_context_takeover\r\n")
        let relayed = Self.head(harness.server(response).sent(to: .client))
        #expect(relayed.contains("Sec-WebSocket-Extensions: permessage-deflate; server_no_context_takeover; "
                                 + "client_no_context_takeover\r\n"), "\(relayed)")
        #expect(relayed.hasPrefix("HTTP/1.1 101 Switching Protocols\r\n") && relayed.hasSuffix("\r\n\r\n"))
        let notes = harness.log.notes.map(\.message)
        #expect(notes.contains { $0.hasPrefix("permessage-deflate: added client_no_context_takeover") }, "\(notes)")
        #expect(!notes.contains { $0.contains("declined") }, "\(notes)")
        // The server's response is recorded as it came.
        #expect(harness.log.upgrades.last?.header("Sec-WebSocket-Extensions") == "permessage-deflate; server_no_context_takeover")
    }

    @Test("a server that keeps its context takeover is warned about")
    func serverDeclines() throws {
        var harness = try Self.faulted()
        harness.client(Wire.request)
        harness.handle(.upstreamConnected)
        harness.server(Wire.response101(extra: "Sec-WebSocket-Extensions: permessage-deflate; client_no_context_takeover\r\n"))
        let warnings = harness.log.notes.filter { $0.level == .warning }.map(\.message)
        #expect(warnings == ["permessage-deflate: the upstream declined server_no_context_takeover; a server message a "
                             + "fault drops may desync the client's inflater (its next compressed message cannot be inflated)"])
        #expect(harness.session.phase == .open)
    }

    @Test("a 101 that agreed no permessage-deflate is relayed as it came")
    func noDeflateAgreed() throws {
        var harness = try Self.faulted()
        harness.client(Wire.request)
        harness.handle(.upstreamConnected)
        let response = Wire.response101()
        #expect(harness.server(response).sent(to: .client) == response)
        #expect(harness.log.notes.filter { $0.message.hasPrefix("permessage-deflate") }.count == 1, "only the offer's note")
    }
}
