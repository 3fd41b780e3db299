import Vocabulary
import WebSocket

/// Where a forward proxy's client wants to go: an authority (`host:port`) and whether the
/// leg to it is TLS. `authority` is what goes in the `Host` header when the client sent none.
public struct ForwardTarget: Sendable, Hashable, CustomStringConvertible {
    public var host: String
    public var port: Int
    public var secure: Bool

    public init(host: String, port: Int, secure: Bool) {
        self.host = host
        self.port = port
        self.secure = secure
    }

    /// "host:port" ("[v6]:port").
    public var authority: String { HostPort(host: host, port: port).description }
    /// "wss://host:port" and the like, for the capture and the control API.
    public var description: String { "\(secure ? "wss" : "ws")://\(authority)" }
}

/// What a forward proxy does with the first request on a client connection (sans-IO:
/// `ProxyRequestRouter.route` decides; the shell carries it out).
public enum ForwardRoute: Sendable, Hashable {
    /// `CONNECT host:port` (RFC 9110 9.3.6): answer 200, then the client's bytes are a
    /// tunnel to `target` (TLS or plain: the shell looks at the first byte).
    case connect(ForwardTarget)
    /// An absolute-form request (`GET http://host:port/path`, RFC 9112 3.2.2): `request` is
    /// the same request in origin form with the proxy's own headers removed, for `target`.
    case forward(ForwardTarget, request: HTTPRequestHead)
    /// The proxy answers itself with `status` and `message`, then closes.
    case reject(status: Int, message: String)
}

/// Decides the route of a forward proxy's request: pure, no sockets.
public enum ProxyRequestRouter {
    /// Headers meant for the proxy (RFC 9110 7.6.1 and common practice), never forwarded.
    static let proxyHeaders: Set<String> = ["proxy-connection", "proxy-authorization", "keep-alive"]

    public static func route(_ request: HTTPRequestHead) -> ForwardRoute {
        if request.method == "CONNECT" {
            guard let target = parseAuthority(request.target, defaultPort: nil, secure: false) else {
                return .reject(status: 400, message: "faultline: CONNECT \(request.target): expected CONNECT HOST:PORT")
            }
            return .connect(target)
        }
        let lower = request.target.lowercased()
        let schemes: [(prefix: String, port: Int, secure: Bool)] = [
            ("http://", 80, false), ("ws://", 80, false), ("https://", 443, true), ("wss://", 443, true),
        ]
        guard let scheme = schemes.first(where: { lower.hasPrefix($0.prefix) }) else {
            return .reject(status: 400, message: "faultline: \(request.method) \(request.target): this is a forward proxy; "
                           + "send CONNECT HOST:PORT or an absolute URL (GET http://HOST:PORT/PATH)")
        }
        let rest = request.target.dropFirst(scheme.prefix.count)
        let slash = rest.firstIndex(where: { $0 == "/" || $0 == "?" }) ?? rest.endIndex
        guard let target = parseAuthority(String(rest[..<slash]), defaultPort: scheme.port, secure: scheme.secure) else {
            return .reject(status: 400, message: "faultline: \(request.target): no usable host and port in the URL")
        }
        var path = String(rest[slash...])
        if path.isEmpty || path.hasPrefix("?") { path = "/" + path }
        var forwarded = request
        forwarded.target = path
        forwarded.headers.removeAll { proxyHeaders.contains($0.name.lowercased()) }
        if !forwarded.headers.contains(where: { $0.name.lowercased() == "host" }) {
            let host = target.port == scheme.port ? HostPort.bracketed(target.host) : target.authority
            forwarded.headers.insert(HeaderField("Host", host), at: 0)
        }
        return .forward(target, request: forwarded)
    }

    /// `host:port`, `[v6]:port`, or `host` with `defaultPort`; nil when the host is empty,
    /// carries user information, or the port is not 1...65535.
    public static func parseAuthority(_ text: String, defaultPort: Int?, secure: Bool) -> ForwardTarget? {
        guard !text.contains("@"), !text.contains(" "),
              case .success(let address) = HostPort.parse(text, defaultPort: defaultPort), address.port >= 1 else { return nil }
        return ForwardTarget(host: address.host.lowercased(), port: address.port, secure: secure)
    }

    /// Whether `host` is one of the `--passthrough` names: exact (case-insensitive), or a
    /// `*.example.com` pattern matching any name under example.com.
    public static func isPassthrough(_ host: String, patterns: [String]) -> Bool {
        let name = host.lowercased()
        return patterns.contains { pattern in
            let lower = pattern.lowercased()
            if lower.hasPrefix("*.") { return name.hasSuffix(lower.dropFirst()) && name.count > lower.count - 1 }
            return lower == name
        }
    }

    /// The first bytes of a tunnel are a TLS handshake record (content type 22, version 3.x).
    /// Nil while fewer than two bytes are known.
    public static func looksLikeTLS(_ bytes: [UInt8]) -> Bool? {
        guard bytes.count >= 2 else { return bytes.isEmpty || bytes[0] == 0x16 ? nil : false }
        return bytes[0] == 0x16 && bytes[1] == 0x03
    }

    /// The proxy's own answer (`Connection: close`, a plain text body).
    public static func rejection(status: Int, message: String) -> [UInt8] {
        HTTPReplies.response(status: status, body: message)
    }

    /// The answer to an accepted CONNECT.
    public static let connectEstablished = Array("HTTP/1.1 200 Connection Established\r\n\r\n".utf8)
}
