import Testing
import Vocabulary

/// The one `HOST:PORT` reader and the one `ws://` URL reader every command uses.
@Suite struct AddressTests {
    @Test func hostPorts() throws {
        #expect(try HostPort.parse("127.0.0.1:8080").get() == HostPort(host: "127.0.0.1", port: 8080))
        #expect(try HostPort.parse("[::1]:0").get() == HostPort(host: "::1", port: 0))
        #expect(try HostPort.parse("localhost:9000").get() == HostPort(host: "localhost", port: 9000))
        #expect(try HostPort.parse("example.com", defaultPort: 443).get() == HostPort(host: "example.com", port: 443))
        #expect(try HostPort.parse("[::1]", defaultPort: 80).get() == HostPort(host: "::1", port: 80))
        for bad in ["8080", "127.0.0.1", "127.0.0.1:70000", ":80", "::1:80", "[::1]80", "host:port", "h:+80", "h: 80", "h:", "[::1", "h:123456"] {
            #expect(throws: HostPortError.self, "\(bad)") { try HostPort.parse(bad).get() }
        }
    }

    @Test func hostPortMessagesNameTheProblem() {
        func message(_ text: String) -> String {
            guard case .failure(let error) = HostPort.parse(text) else { return "" }
            return error.description
        }
        #expect(message("127.0.0.1").contains("has no port"))
        #expect(message(":80").contains("has no host"))
        #expect(message("::1:80").contains("brackets"))
        #expect(message("h:99999").contains("not a number from 0 to 65535"))
    }

    /// Brackets go around an IPv6 address only. `[[]` once read as the host `[`, which
    /// printed back as `[:443`, an address that does not read at all (found by the
    /// `proxy-request` fuzz target from `--upstream wss://[[]`).
    @Test func bracketsHoldAnIPv6AddressOnly() throws {
        for bad in ["[[]:80", "[[]", "[]]:80", "[a]:80", "[1.2.3.4]:80", "[::1%]:80", "[::1%e/0]:80", "a[b:80", "a]:80", "[:80"] {
            #expect(throws: HostPortError.self, "\(bad)") { try HostPort.parse(bad, defaultPort: 443).get() }
        }
        #expect(try HostPort.parse("[fe80::1%eth0]:80").get() == HostPort(host: "fe80::1%eth0", port: 80))
        #expect(try HostPort.parse("[::ffff:10.0.0.1]:80").get() == HostPort(host: "::ffff:10.0.0.1", port: 80))
        #expect(WebSocketURL.parse("wss://[[]").map(\.host) == .failure(.badAuthority(HostPortError(
            "'[[]': '[[]' is not an IPv6 address; brackets go around one only, such as [::1]:8080"))))
        // Every address that reads prints back as one that reads the same.
        for text in ["[::1]:1", "[fe80::1%eth0]:2", "h.example:3", "10.0.0.1:4"] {
            let address = try HostPort.parse(text).get()
            #expect(try HostPort.parse(address.description).get() == address)
        }
    }

    /// A host is ASCII without spaces or control characters. Read by characters, `۝:80`
    /// (U+06DD joins the character after it into one) hid its ':' and printed back as
    /// `۝:80:80` (found by the `proxy-request` fuzz target).
    @Test func aHostIsASCII() {
        for bad in ["\u{6DD}:80", "ws\u{6DD}.example:80", "a b:80", "a\tb:80", "a\u{7F}:80", "caf\u{E9}.example:80", "\u{1B}[2J:80"] {
            #expect(throws: HostPortError.self, "\(bad)") { try HostPort.parse(bad).get() }
        }
        guard case .failure(let error) = HostPort.parse("\u{1B}[2J:80") else { return }
        #expect(error.description.contains("U+1B") && !error.description.contains("\u{1B}"))
        #expect(throws: WebSocketURLError.self) { try WebSocketURL.parse("ws://\u{6DD}:80").get() }
    }

    @Test func descriptionBracketsIPv6() {
        #expect(HostPort(host: "::1", port: 80).description == "[::1]:80")
        #expect(HostPort(host: "a.b", port: 1).description == "a.b:1")
    }

    @Test func webSocketURLs() throws {
        let plain = try WebSocketURL.parse("ws://example.com/app/k?x=1").get()
        #expect(plain == WebSocketURL(secure: false, host: "example.com", port: 80, target: "/app/k?x=1"))
        let secure = try WebSocketURL.parse("WSS://[::1]:9443").get()
        #expect(secure == WebSocketURL(secure: true, host: "::1", port: 9443, target: ""))
        #expect(secure.description == "wss://[::1]:9443")
        #expect(try WebSocketURL.parse("ws://h:1?q").get().target == "?q")
        #expect(WebSocketURL.parse("http://h/") == .failure(.notWebSocketURL))
        #expect(WebSocketURL.parse("ws:///path") == .failure(.noHost))
        #expect(WebSocketURL.parse("ws://u@h:1/") == .failure(.userInformation))
        guard case .failure(.badAuthority) = WebSocketURL.parse("ws://h:port/") else {
            Issue.record("a bad port is a bad authority")
            return
        }
    }

    @Test func hostPatterns() {
        #expect(HostPattern.matches("example.com", hostHeader: "Example.COM:8080"))
        #expect(!HostPattern.matches("example.com:80", hostHeader: "example.com:8080"))
        #expect(HostPattern.matches("*.example.com", hostHeader: "a.example.com"))
        #expect(!HostPattern.matches("*.example.com", hostHeader: "example.com"))
        #expect(HostPattern.matches("[::1]", hostHeader: "[::1]:80"))
    }
}

/// A URL holds printable ASCII only: a CR LF in its path would reach the request line sent
/// upstream (`--upstream`, the toxiproxy API, replay) as a second header or request.
@Suite struct URLCharacterTests {
    @Test(arguments: [("ws://h:1/a\r\nX: y", 0x0D), ("ws://h:1/a\nb", 0x0A), ("ws://h:1/\u{0}", 0), ("ws://h:1/a b", 0x20),
                      ("ws://h:1/\u{85}", 0x85), ("ws://h:1/\u{7F}", 0x7F), ("ws://h:1/caf\u{E9}", 0xE9)] as [(String, UInt32)])
    func controlsSpacesAndNonASCIIAreRefused(url: String, code: UInt32) {
        #expect(WebSocketURL.parse(url) == .failure(.badCharacter(code)))
    }

    @Test func theMessageNamesTheCharacterWithoutPrintingIt() {
        #expect(WebSocketURLError.badCharacter(0x1B).description.hasPrefix("U+001B is not allowed in a URL"))
    }
}
