import Testing
import WebSocket
@testable import ProxyCore

/// The forward proxy's routing decisions, without sockets.
@Suite("ProxyRequestRouter")
struct ProxyRequestRouterTests {
    private func request(_ method: String, _ target: String, _ headers: [(String, String)] = []) -> HTTPRequestHead {
        HTTPRequestHead(method: method, target: target, headers: headers.map { HeaderField($0.0, $0.1) })
    }

    @Test("CONNECT host:port, [v6]:port; a CONNECT without a port or with a bad one is refused")
    func connect() {
        #expect(ProxyRequestRouter.route(request("CONNECT", "api.example.com:443"))
                == .connect(ForwardTarget(host: "api.example.com", port: 443, secure: false)))
        #expect(ProxyRequestRouter.route(request("CONNECT", "[::1]:8443"))
                == .connect(ForwardTarget(host: "::1", port: 8443, secure: false)))
        for bad in ["api.example.com", "api.example.com:0", "api.example.com:65536", ":443", "user@h:443", "h:44x", "a:b:443"] {
            guard case .reject(let status, _) = ProxyRequestRouter.route(request("CONNECT", bad)) else {
                Issue.record("CONNECT \(bad) was not refused")
                continue
            }
            #expect(status == 400)
        }
    }

    @Test("absolute form: origin-form target, default ports, Host kept or added, proxy headers removed")
    func absoluteForm() {
        let upgrade = request("GET", "http://127.0.0.1:6001/app/key?protocol=7",
                              [("Host", "127.0.0.1:6001"), ("Proxy-Connection", "keep-alive"), ("Upgrade", "websocket")])
        guard case .forward(let target, let forwarded) = ProxyRequestRouter.route(upgrade) else {
            Issue.record("not forwarded")
            return
        }
        #expect(target == ForwardTarget(host: "127.0.0.1", port: 6001, secure: false))
        #expect(forwarded.target == "/app/key?protocol=7")
        #expect(forwarded.headers.map(\.name) == ["Host", "Upgrade"])

        guard case .forward(let secure, let bare) = ProxyRequestRouter.route(request("GET", "wss://Example.COM?x=1")) else {
            Issue.record("not forwarded")
            return
        }
        #expect(secure == ForwardTarget(host: "example.com", port: 443, secure: true))
        #expect(bare.target == "/?x=1")
        #expect(bare.headers == [HeaderField("Host", "example.com")], "Host added without the default port")
    }

    @Test("an origin-form request to a forward proxy is refused with a message that says what to send")
    func originForm() {
        guard case .reject(let status, let message) = ProxyRequestRouter.route(request("GET", "/app/key")) else {
            Issue.record("not refused")
            return
        }
        #expect(status == 400)
        #expect(message.contains("forward proxy"))
    }

    @Test("passthrough patterns: exact names and *.domain, case-insensitive")
    func passthrough() {
        let patterns = ["Pinned.example.com", "*.bank.test"]
        #expect(ProxyRequestRouter.isPassthrough("pinned.example.com", patterns: patterns))
        #expect(ProxyRequestRouter.isPassthrough("api.bank.test", patterns: patterns))
        #expect(!ProxyRequestRouter.isPassthrough("bank.test", patterns: patterns))
        #expect(!ProxyRequestRouter.isPassthrough("other.example.com", patterns: patterns))
    }

    @Test("a tunnel's first bytes: a TLS handshake record, plain text, or not enough to tell")
    func tlsDetection() {
        #expect(ProxyRequestRouter.looksLikeTLS([]) == nil)
        #expect(ProxyRequestRouter.looksLikeTLS([0x16]) == nil)
        #expect(ProxyRequestRouter.looksLikeTLS([0x16, 0x03, 0x01]) == true)
        #expect(ProxyRequestRouter.looksLikeTLS(Array("GET / HTTP/1.1".utf8)) == false)
        #expect(ProxyRequestRouter.looksLikeTLS([0x47]) == false)
    }
}
