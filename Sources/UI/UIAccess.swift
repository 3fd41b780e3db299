import ControlAPI
import WebSocket

/// Who may use the UI, decided per request, pure. The UI can break every proxied
/// connection, so a web page elsewhere must not reach it:
/// - loopback by default; any other address needs a token (as for the control API);
/// - on loopback, a `Host` that is not a loopback name is refused (DNS rebinding: a page
///   whose name resolves to 127.0.0.1 still sends its own name);
/// - the live socket and every action need an `Origin` equal to the UI's own (a WebSocket
///   is not bound by the same-origin policy, so a cross-site page could open one);
/// - with a token, every request carries it: once in the address (`/?token=T`, answered
///   with a redirect that sets an HttpOnly, SameSite=Strict cookie and takes the token out
///   of the address bar), then in that cookie.
package struct UIAccess: Sendable {
    package static let cookieName = "faultline-ui"
    package var token: String?
    package var loopbackOnly: Bool

    package init(token: String?, loopbackOnly: Bool) {
        self.token = token
        self.loopbackOnly = loopbackOnly
    }

    /// What to do with a request before it is served.
    package enum Verdict: Equatable, Sendable {
        case allow
        /// The token came in the query: set the cookie and send the browser to `location`.
        case setCookie(location: String)
        case refuse(status: Int, message: String)
    }

    /// `needsOrigin`: the live socket (a page's actions travel on it).
    package func check(path: String, query: String, headers: [HeaderField], needsOrigin: Bool) -> Verdict {
        guard let host = headers.first(named: "Host")?.trimmingCharacters(in: " \t"), !host.isEmpty else {
            return .refuse(status: 400, message: "the request has no Host header")
        }
        if loopbackOnly, !LoopbackHost.isLoopback(hostHeader: host) {
            return .refuse(status: 403, message: "Host '\(host)' is not a loopback address; this UI serves loopback clients only")
        }
        if let origin = headers.first(named: "Origin")?.trimmingCharacters(in: " \t") {
            guard Self.origin(origin, isHost: host) else {
                return .refuse(status: 403, message: "Origin '\(origin)' is not this UI's own (http://\(host))")
            }
        } else if needsOrigin {
            return .refuse(status: 403, message: "the live socket needs an Origin header (browsers send one)")
        }
        guard let token else { return .allow }
        if let given = Self.cookie(Self.cookieName, in: headers), ControlRouter.constantTimeEqual(given, token) { return .allow }
        if let given = Self.queryValue("token", in: query) {
            guard ControlRouter.constantTimeEqual(given, token) else {
                return .refuse(status: 401, message: "wrong token in the address")
            }
            return needsOrigin ? .allow : .setCookie(location: path)
        }
        return .refuse(status: 401, message: "this UI needs its token: open it as http://\(host)/?token=TOKEN")
    }

    /// `http://HOST` where HOST is exactly the request's `Host` (port included).
    static func origin(_ origin: String, isHost host: String) -> Bool {
        let scheme = "http://"
        guard origin.lowercased().hasPrefix(scheme) else { return false }
        return origin.dropFirst(scheme.count).lowercased() == host.lowercased()
    }

    /// The value of cookie `name` in the `Cookie` headers.
    static func cookie(_ name: String, in headers: [HeaderField]) -> String? {
        for header in headers.values(named: "Cookie") {
            for part in header.split(separator: ";") {
                let pair = part.split(separator: "=", maxSplits: 1, omittingEmptySubsequences: false)
                if pair.count == 2, String(pair[0]).trimmingCharacters(in: " \t") == name { return String(pair[1]).trimmingCharacters(in: " \t") }
            }
        }
        return nil
    }

    /// A query member's value, percent-decoding nothing (a token is plain ASCII).
    static func queryValue(_ name: String, in query: String) -> String? {
        for part in query.split(separator: "&") {
            let pair = part.split(separator: "=", maxSplits: 1, omittingEmptySubsequences: false)
            if pair.count == 2, pair[0] == name { return String(pair[1]) }
        }
        return nil
    }

    /// The `Set-Cookie` value that carries the token from now on.
    func cookieHeader() -> String {
        "\(Self.cookieName)=\(token ?? ""); Path=/; HttpOnly; SameSite=Strict"
    }
}
