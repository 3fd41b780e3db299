import Testing
import WebSocket

/// `DeflateContextTakeover`: the extension header rewrites that make dropping a message
/// safe under permessage-deflate (RFC 7692 7.1.1).
@Suite("permessage-deflate context takeover rewrites")
struct DeflateContextTakeoverTests {
    @Test("every permessage-deflate offer asks for both; other extensions and parameters stay")
    func offers() throws {
        let headers = [HeaderField("Host", "x"),
                       HeaderField("Sec-WebSocket-Extensions", "x-webkit, permessage-deflate; client_max_window_bits, permessage-deflate; server_no_context_takeover")]
        let rewritten = try #require(DeflateContextTakeover.offer(headers))
        #expect(rewritten[0] == headers[0])
        #expect(rewritten[1].value == "x-webkit, permessage-deflate; client_max_window_bits; server_no_context_takeover; "
                + "client_no_context_takeover, permessage-deflate; server_no_context_takeover; client_no_context_takeover")
        #expect(DeflateContextTakeover.offer(rewritten) == nil, "nothing left to add")
        #expect(DeflateContextTakeover.offer([HeaderField("Sec-WebSocket-Extensions", "x-webkit")]) == nil)
        #expect(DeflateContextTakeover.offer([]) == nil)
    }

    @Test("the accepted permessage-deflate of a response names client_no_context_takeover, case-insensitively found")
    func response() throws {
        let headers = [HeaderField("sec-websocket-extensions", "Permessage-Deflate; Server_No_Context_Takeover")]
        let rewritten = try #require(DeflateContextTakeover.response(headers))
        #expect(rewritten[0].value == "Permessage-Deflate; Server_No_Context_Takeover; client_no_context_takeover")
        #expect(DeflateContextTakeover.response([HeaderField("Sec-WebSocket-Extensions", "permessage-deflate; CLIENT_NO_CONTEXT_TAKEOVER")]) == nil)
        let agreed = try #require(DeflateParameters.negotiated(in: rewritten))
        #expect(agreed.clientNoContextTakeover && agreed.serverNoContextTakeover)
    }

    @Test("empty and odd elements are kept, never trapped on")
    func oddElements() throws {
        let rewritten = try #require(DeflateContextTakeover.offer([HeaderField("Sec-WebSocket-Extensions", ", permessage-deflate; ; =,")]))
        #expect(rewritten[0].value == ", permessage-deflate; =; server_no_context_takeover; client_no_context_takeover,")
    }
}
