import Testing
import WebSocket
@testable import UI

/// Who may use the UI: loopback Host names only on loopback, the page's own Origin on the
/// live socket, the token once in the address then in a cookie.
@Suite struct UIAccessTests {
    let loopback = UIAccess(token: nil, loopbackOnly: true)

    func headers(host: String? = "127.0.0.1:8090", origin: String? = nil, cookie: String? = nil) -> [HeaderField] {
        var h: [HeaderField] = []
        if let host { h.append(HeaderField("Host", host)) }
        if let origin { h.append(HeaderField("Origin", origin)) }
        if let cookie { h.append(HeaderField("Cookie", cookie)) }
        return h
    }

    @Test func loopbackPageIsServedAndARebindingHostIsRefused() {
        #expect(loopback.check(path: "/", query: "", headers: headers(), needsOrigin: false) == .allow)
        #expect(loopback.check(path: "/", query: "", headers: headers(host: "localhost:8090"), needsOrigin: false) == .allow)
        // DNS rebinding: a page at evil.example whose name now resolves to 127.0.0.1.
        guard case .refuse(403, let message) = loopback.check(path: "/", query: "", headers: headers(host: "evil.example:8090"),
                                                             needsOrigin: false) else {
            Issue.record("a foreign Host was served")
            return
        }
        #expect(message.contains("evil.example"))
        guard case .refuse(400, _) = loopback.check(path: "/", query: "", headers: headers(host: nil), needsOrigin: false) else {
            Issue.record("a request without Host was served")
            return
        }
    }

    @Test func theLiveSocketNeedsThePagesOwnOrigin() {
        #expect(loopback.check(path: "/live", query: "", headers: headers(origin: "http://127.0.0.1:8090"), needsOrigin: true) == .allow)
        for origin in ["http://evil.example", "http://127.0.0.1:8091", "https://127.0.0.1:8090", "null", "http://localhost:8090"] {
            guard case .refuse(403, _) = loopback.check(path: "/live", query: "", headers: headers(origin: origin), needsOrigin: true) else {
                Issue.record("the socket was opened from \(origin)")
                continue
            }
        }
        guard case .refuse(403, _) = loopback.check(path: "/live", query: "", headers: headers(), needsOrigin: true) else {
            Issue.record("the socket was opened without Origin")
            return
        }
        // A cross-site page's request for a file is refused as well.
        guard case .refuse(403, _) = loopback.check(path: "/", query: "", headers: headers(origin: "http://evil.example"), needsOrigin: false) else {
            Issue.record("a cross-site request was served")
            return
        }
    }

    @Test func aTokenComesOnceInTheAddressThenInAnHttpOnlyCookie() {
        let access = UIAccess(token: "s3cret", loopbackOnly: false)
        let host = headers(host: "10.0.0.5:8090")
        guard case .refuse(401, _) = access.check(path: "/", query: "", headers: host, needsOrigin: false) else {
            Issue.record("served without the token")
            return
        }
        guard case .refuse(401, _) = access.check(path: "/", query: "token=wrong", headers: host, needsOrigin: false) else {
            Issue.record("served with a wrong token")
            return
        }
        #expect(access.check(path: "/", query: "token=s3cret", headers: host, needsOrigin: false) == .setCookie(location: "/"))
        #expect(access.cookieHeader() == "faultline-ui=s3cret; Path=/; HttpOnly; SameSite=Strict")
        let withCookie = headers(host: "10.0.0.5:8090", origin: "http://10.0.0.5:8090", cookie: "a=1; faultline-ui=s3cret")
        #expect(access.check(path: "/live", query: "", headers: withCookie, needsOrigin: true) == .allow)
        let wrongCookie = headers(host: "10.0.0.5:8090", origin: "http://10.0.0.5:8090", cookie: "faultline-ui=nope")
        guard case .refuse(401, _) = access.check(path: "/live", query: "", headers: wrongCookie, needsOrigin: true) else {
            Issue.record("the socket opened with a wrong cookie")
            return
        }
    }
}
