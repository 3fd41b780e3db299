import Testing
import Vocabulary
import WebSocket

@Suite("Opening handshake")
struct HandshakeTests {
    @Test("accept key of the RFC 6455 1.3 sample")
    func knownAccept() {
        #expect(WebSocketHandshake.acceptKey(for: "dGhlIHNhbXBsZSBub25jZQ==") == "s3pPLMBiTxaQ9kYGzzhZRbK+xOo=")
    }

    @Test("keys are 16 bytes of base64 and repeat with the seed")
    func keys() {
        var a = SeededGenerator(seed: 1)
        var b = SeededGenerator(seed: 1)
        let key = WebSocketHandshake.makeKey(using: &a)
        #expect(key == WebSocketHandshake.makeKey(using: &b))
        #expect(key.count == 24)
        #expect(key.hasSuffix("=="))
        #expect(key != WebSocketHandshake.makeKey(using: &a))
    }

    @Test("request and response agree, extra headers kept in order")
    func requestResponse() throws {
        let request = WebSocketHandshake.request(host: "example.com", target: "/chat", key: "dGhlIHNhbXBsZSBub25jZQ==",
                                                 extraHeaders: [HeaderField("Sec-WebSocket-Protocol", "chat")])
        #expect(request.isWebSocketUpgrade)
        #expect(request.headers.last == HeaderField("Sec-WebSocket-Protocol", "chat"))
        let response = WebSocketHandshake.response(accepting: request,
                                                   extraHeaders: [HeaderField("Sec-WebSocket-Protocol", "chat")])
        #expect(response.status == 101)
        #expect(response.headers.first(named: "sec-websocket-accept") == "s3pPLMBiTxaQ9kYGzzhZRbK+xOo=")
        #expect(response.headers.first(named: "Sec-WebSocket-Extensions") == nil)
        #expect(WebSocketHandshake.problem(with: response, forKey: "dGhlIHNhbXBsZSBub25jZQ==") == nil)
        #expect(WebSocketHandshake.problem(with: response, forKey: "x3JJHMbDL1EzLkh9GBhXDw==") != nil)
        var refused = response
        refused.status = 403
        #expect(WebSocketHandshake.problem(with: refused, forKey: "dGhlIHNhbXBsZSBub25jZQ==")?.contains("403") == true)
    }
}
