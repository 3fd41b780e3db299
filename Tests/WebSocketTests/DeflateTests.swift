import Testing
import WebSocket

@Suite("permessage-deflate")
struct DeflateTests {
    @Test("RFC 7692 7.2.3.1: Hello deflates to f2 48 cd c9 c9 07 00 and back")
    func knownValue() throws {
        let deflater = MessageDeflater(windowBits: 15, noContextTakeover: false)
        #expect(deflater.deflate(Array("Hello".utf8)) == hex("f2 48 cd c9 c9 07 00"))
        let inflater = MessageInflater(windowBits: 15, noContextTakeover: false)
        #expect(try inflater.inflate(hex("f2 48 cd c9 c9 07 00")) == Array("Hello".utf8))
    }

    @Test("RFC 7692 7.2.3.2: with context takeover the second Hello is shorter and still inflates")
    func contextTakeover() throws {
        let deflater = MessageDeflater(windowBits: 15, noContextTakeover: false)
        let inflater = MessageInflater(windowBits: 15, noContextTakeover: false)
        let first = deflater.deflate(Array("Hello".utf8))
        let second = deflater.deflate(Array("Hello".utf8))
        #expect(second == hex("f2 00 11 00 00"))
        #expect(second.count < first.count)
        #expect(try inflater.inflate(first) == Array("Hello".utf8))
        #expect(try inflater.inflate(second) == Array("Hello".utf8))
        // A fresh inflater lacks the window the second message refers to.
        let fresh = MessageInflater(windowBits: 15, noContextTakeover: true)
        #expect(throws: DeflateError.self) { try fresh.inflate(second) }
    }

    @Test("no_context_takeover: every message stands alone", arguments: [true, false])
    func noContextTakeover(noTakeover: Bool) throws {
        let deflater = MessageDeflater(windowBits: 15, noContextTakeover: noTakeover)
        let inflater = MessageInflater(windowBits: 15, noContextTakeover: noTakeover)
        let message = Array(#"{"event":"pusher:ping","data":{}}"#.utf8)
        let compressed = (0..<5).map { _ in deflater.deflate(message) }
        if noTakeover {
            #expect(Set(compressed).count == 1)
            // Any message inflates on its own.
            #expect(try MessageInflater(windowBits: 15, noContextTakeover: true).inflate(compressed[3]) == message)
        } else {
            #expect(compressed[1].count < compressed[0].count)
        }
        for piece in compressed { #expect(try inflater.inflate(piece) == message) }
    }

    @Test("large, empty and incompressible messages round-trip with small windows", arguments: [9, 10, 15])
    func roundTrips(windowBits: Int) throws {
        let deflater = MessageDeflater(windowBits: windowBits, noContextTakeover: false)
        let inflater = MessageInflater(windowBits: windowBits, noContextTakeover: false)
        let text = Array(String(repeating: "the quick brown fox jumps over the lazy dog ", count: 30_000).utf8)
        for message in [text, [], patternBytes(200_000), Array("x".utf8), text] {
            let compressed = deflater.deflate(message)
            #expect(try inflater.inflate(compressed) == message)
        }
    }

    @Test("output bound: a small message that inflates past maxOutput throws 1009")
    func bomb() throws {
        let compressed = MessageDeflater(windowBits: 15, noContextTakeover: true).deflate([UInt8](repeating: 0, count: 1 << 20))
        #expect(compressed.count < 2000)
        let inflater = MessageInflater(windowBits: 15, noContextTakeover: false)
        do {
            _ = try inflater.inflate(compressed, maxOutput: 100_000)
            Issue.record("no limit")
        } catch let error as WebSocketError {
            #expect(error.kind == .payloadTooLarge)
            #expect(error.closeCode == .messageTooBig)
        }
        // The inflater was reset and works for the next message.
        #expect(try inflater.inflate(hex("f2 48 cd c9 c9 07 00")) == Array("Hello".utf8))
    }

    @Test("corrupt data throws DeflateError with 1007")
    func corrupt() {
        let inflater = MessageInflater(windowBits: 15, noContextTakeover: false)
        do {
            _ = try inflater.inflate([0xFF, 0xFF, 0xFF, 0xFF, 0x12])
            Issue.record("accepted corrupt data")
        } catch let error as DeflateError {
            #expect(error.closeCode == .invalidPayload)
            #expect(error.message.contains("inflate"))
        } catch {
            Issue.record("unexpected \(error)")
        }
    }

    /// An empty parameter trapped `negotiated(in:)` (index out of range): a server's
    /// response could end the proxy, a pcap the reader (found by the http-head fuzz target).
    @Test("empty extension parameters are skipped", arguments: [
        "permessage-deflate; ", "permessage-deflate;;server_no_context_takeover", "permessage-deflate; =10", "permessage-deflate; ,x",
    ])
    func emptyParameters(value: String) {
        #expect(DeflateParameters.negotiated(in: [HeaderField("Sec-WebSocket-Extensions", value)]) != nil)
    }

    @Test("negotiated parameters from a response header")
    func negotiation() throws {
        #expect(DeflateParameters.negotiated(in: [HeaderField("Upgrade", "websocket")]) == nil)
        #expect(DeflateParameters.negotiated(in: [HeaderField("Sec-WebSocket-Extensions", "x-webkit-deflate-frame")]) == nil)
        let plain = try #require(DeflateParameters.negotiated(in: [HeaderField("sec-websocket-extensions", "permessage-deflate")]))
        #expect(plain == DeflateParameters())
        let full = try #require(DeflateParameters.negotiated(in: [
            HeaderField("Sec-WebSocket-Extensions", "foo, Permessage-Deflate; server_no_context_takeover ; client_no_context_takeover; server_max_window_bits=10; client_max_window_bits=\"12\""),
        ]))
        #expect(full.serverNoContextTakeover)
        #expect(full.clientNoContextTakeover)
        #expect(full.serverMaxWindowBits == 10)
        #expect(full.clientMaxWindowBits == 12)
        #expect(full.headerValue == "permessage-deflate; server_no_context_takeover; client_no_context_takeover; server_max_window_bits=10; client_max_window_bits=12")
        #expect(DeflateParameters.negotiated(in: [HeaderField("Sec-WebSocket-Extensions", full.headerValue)]) == full)
        let odd = try #require(DeflateParameters.negotiated(in: [HeaderField("Sec-WebSocket-Extensions", "permessage-deflate; server_max_window_bits=99; client_max_window_bits")]))
        #expect(odd.serverMaxWindowBits == 15)
        #expect(odd.clientMaxWindowBits == 15)
    }

    @Test("inflater and deflater made from parameters pick the sending side's settings")
    func perSide() throws {
        var parameters = DeflateParameters()
        parameters.serverNoContextTakeover = true
        let serverDeflater = parameters.makeDeflater(forMessagesFromClient: false)
        let a = serverDeflater.deflate(Array("Hello".utf8))
        #expect(serverDeflater.deflate(Array("Hello".utf8)) == a)
        let clientDeflater = parameters.makeDeflater(forMessagesFromClient: true)
        let b = clientDeflater.deflate(Array("Hello".utf8))
        #expect(clientDeflater.deflate(Array("Hello".utf8)) != b)
        let inflater = parameters.makeInflater(forMessagesFromClient: false)
        #expect(try inflater.inflate(a) == Array("Hello".utf8))
        #expect(try inflater.inflate(a) == Array("Hello".utf8))
    }
}
