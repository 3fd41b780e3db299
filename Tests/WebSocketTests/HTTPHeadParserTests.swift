import Testing
import WebSocket

@Suite("HTTP head parsing")
struct HTTPHeadParserTests {
    static let request = """
        GET /app/key?protocol=7 HTTP/1.1\r
        Host: ws.example.com:8080\r
        upgrade: WebSocket\r
        Connection: keep-alive, Upgrade\r
        Sec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==\r
        Sec-WebSocket-Version: 13\r
        Sec-WebSocket-Extensions: permessage-deflate; client_max_window_bits\r
        Sec-WebSocket-Protocol: chat, superchat\r
        X-Custom:   spaced value\t \r
        \r

        """

    @Test("a request fed whole, byte by byte and in random splits")
    func requestSplits() throws {
        let bytes = Array(Self.request.utf8) + [0x81, 0x00]
        for feeding in Feeding.allCases {
            var parser = HTTPHeadParser()
            var head: HTTPRequestHead?
            for piece in feeding.pieces(of: bytes, seed: 5) {
                parser.append(piece)
                if head == nil { head = try parser.parseRequest() }
            }
            let request = try #require(head, "\(feeding)")
            #expect(request.method == "GET")
            #expect(request.target == "/app/key?protocol=7")
            #expect(request.version == "HTTP/1.1")
            #expect(request.headers.map(\.name) == ["Host", "upgrade", "Connection", "Sec-WebSocket-Key",
                                                    "Sec-WebSocket-Version", "Sec-WebSocket-Extensions",
                                                    "Sec-WebSocket-Protocol", "X-Custom"])
            #expect(request.headers.first(named: "x-custom") == "spaced value")
            #expect(request.headers.first(named: "SEC-WEBSOCKET-EXTENSIONS") == "permessage-deflate; client_max_window_bits")
            #expect(request.headers.first(named: "sec-websocket-protocol") == "chat, superchat")
            #expect(request.isWebSocketUpgrade)
            #expect(parser.remainder == [0x81, 0x00], "\(feeding)")
        }
    }

    @Test("nil until the blank line arrives")
    func incomplete() throws {
        var parser = HTTPHeadParser()
        parser.append(Array("GET / HTTP/1.1\r\nHost: a\r\n".utf8))
        #expect(try parser.parseRequest() == nil)
        #expect(parser.remainder == [])
        parser.append([13])
        #expect(try parser.parseRequest() == nil)
        parser.append([10])
        #expect(try parser.parseRequest()?.headers == [HeaderField("Host", "a")])
    }

    @Test("bare LF line ends are tolerated")
    func bareLF() throws {
        var parser = HTTPHeadParser()
        parser.append(Array("HTTP/1.1 101 Switching Protocols\nUpgrade: websocket\n\nrest".utf8))
        let response = try #require(try parser.parseResponse())
        #expect(response.status == 101)
        #expect(response.reason == "Switching Protocols")
        #expect(response.headers == [HeaderField("Upgrade", "websocket")])
        #expect(parser.remainder == Array("rest".utf8))
    }

    @Test("a response round-trips through serialized")
    func responseRoundTrip() throws {
        let response = HTTPResponseHead(status: 426, reason: "Upgrade Required",
                                        headers: [HeaderField("sec-websocket-version", "13"), HeaderField("X-A", "b c")])
        #expect(String(decoding: response.serialized, as: UTF8.self)
                == "HTTP/1.1 426 Upgrade Required\r\nsec-websocket-version: 13\r\nX-A: b c\r\n\r\n")
        var parser = HTTPHeadParser()
        parser.append(response.serialized)
        #expect(try parser.parseResponse() == response)
    }

    @Test("a request round-trips through serialized")
    func requestRoundTrip() throws {
        var parser = HTTPHeadParser()
        parser.append(Array(Self.request.utf8))
        let request = try #require(try parser.parseRequest())
        var again = HTTPHeadParser()
        again.append(request.serialized)
        #expect(try again.parseRequest() == request)
    }

    @Test("a head over the limit fails with 431, ended or not")
    func limit() throws {
        var parser = HTTPHeadParser(maxHeadBytes: 64)
        parser.append(Array("GET / HTTP/1.1\r\n".utf8))
        #expect(try parser.parseRequest() == nil)
        parser.append(Array("X-Long: \(String(repeating: "a", count: 100))".utf8))
        #expect(throws: HTTPParseError.self) { try parser.parseRequest() }
        do {
            _ = try parser.parseRequest()
            Issue.record("expected a 431")
        } catch {
            #expect(error.status == 431)
            #expect(error.message.contains("64"))
        }
        var whole = HTTPHeadParser(maxHeadBytes: 64)
        whole.append(Array("GET / HTTP/1.1\r\nX-Long: \(String(repeating: "a", count: 100))\r\n\r\n".utf8))
        do {
            _ = try whole.parseRequest()
            Issue.record("expected a 431")
        } catch {
            #expect(error.status == 431)
        }
        var fits = HTTPHeadParser(maxHeadBytes: 64)
        fits.append(Array("GET / HTTP/1.1\r\nHost: a\r\n\r\n".utf8) + patternBytes(500))
        #expect(try fits.parseRequest() != nil)
        #expect(fits.remainder.count == 500)
    }

    @Test("malformed heads fail with 400 and say what was wrong",
          arguments: ["GARBAGE\r\n\r\n", "GET / HTTP/1.1\r\nNoColon\r\n\r\n", "GET / HTTP/1.1\r\n folded: x\r\n\r\n",
                      "GET / HTTP/1.1\r\nBad Name: x\r\n\r\n"])
    func malformed(text: String) throws {
        var parser = HTTPHeadParser()
        parser.append(Array(text.utf8))
        do {
            _ = try parser.parseRequest()
            Issue.record("expected an error for \(text.debugDescription)")
        } catch {
            #expect(error.status == 400)
            #expect(!error.message.isEmpty)
        }
    }

    // "-03" and "+99" were parsed as statuses -3 and 99 (found by the http-head fuzz target).
    @Test("malformed status lines fail", arguments: ["HTTP/1.1 abc OK\r\n\r\n", "ICY 200 OK\r\n\r\n", "HTTP/1.1\r\n\r\n",
                                                   "HTTP/1.1 -03 Minus\r\n\r\n", "HTTP/1.1 +99 Plus\r\n\r\n"])
    func badStatus(text: String) throws {
        var parser = HTTPHeadParser()
        parser.append(Array(text.utf8))
        #expect(throws: HTTPParseError.self) { try parser.parseResponse() }
    }

    @Test("upgrade detection needs every piece")
    func upgradeDetection() {
        let good = WebSocketHandshake.request(host: "h", target: "/", key: "k")
        #expect(good.isWebSocketUpgrade)
        var post = good
        post.method = "POST"
        #expect(!post.isWebSocketUpgrade)
        for dropped in ["Upgrade", "Connection", "Sec-WebSocket-Key", "Sec-WebSocket-Version"] {
            var head = good
            head.headers.removeAll { $0.name == dropped }
            #expect(!head.isWebSocketUpgrade, "without \(dropped)")
        }
        var version8 = good
        version8.headers = version8.headers.map { $0.name == "Sec-WebSocket-Version" ? HeaderField($0.name, "8") : $0 }
        #expect(!version8.isWebSocketUpgrade)
    }
}
