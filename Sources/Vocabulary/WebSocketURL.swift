/// A `ws://` or `wss://` URL split into its parts: `ws[s]://HOST[:PORT][/PATH][?QUERY]`
/// (port 80 for ws, 443 for wss, by default). What a command accepts after the authority
/// (a path prefix, a request target, an app key) is its own rule, applied to `target`.
public struct WebSocketURL: Sendable, Hashable, CustomStringConvertible {
    /// `wss://`: TLS.
    public var secure: Bool
    public var host: String
    public var port: Int
    /// Everything after the authority as written: "", "/", "/app/key?protocol=7", "?x".
    public var target: String

    public init(secure: Bool, host: String, port: Int, target: String) {
        self.secure = secure
        self.host = host
        self.port = port
        self.target = target
    }

    /// "host:port", with brackets around an IPv6 literal.
    public var authority: String { HostPort(host: host, port: port).description }

    public var description: String { "\(secure ? "wss" : "ws")://\(authority)\(target)" }

    /// Parses the scheme (in any case), the authority and the rest. The error says which
    /// part is wrong, so that each command can phrase it in its own terms.
    public static func parse(_ text: String) -> Result<WebSocketURL, WebSocketURLError> {
        let lower = text.lowercased()
        let secure = lower.hasPrefix("wss://")
        guard secure || lower.hasPrefix("ws://") else { return .failure(.notWebSocketURL) }
        let rest = text.dropFirst(secure ? 6 : 5)
        let end = rest.firstIndex(where: { $0 == "/" || $0 == "?" || $0 == "#" }) ?? rest.endIndex
        let authority = String(rest[..<end])
        guard !authority.isEmpty else { return .failure(.noHost) }
        if authority.contains("@") { return .failure(.userInformation) }
        switch HostPort.parse(authority, defaultPort: secure ? 443 : 80) {
        case .failure(let error): return .failure(.badAuthority(error))
        case .success(let address):
            return .success(WebSocketURL(secure: secure, host: address.host, port: address.port, target: String(rest[end...])))
        }
    }
}

/// Which part of a `ws://` URL is wrong.
public enum WebSocketURLError: Error, Sendable, Hashable, CustomStringConvertible {
    /// It starts with neither `ws://` nor `wss://`.
    case notWebSocketURL
    /// Nothing between the scheme and the path.
    case noHost
    /// `user@host`: not supported.
    case userInformation
    /// The host or port is malformed.
    case badAuthority(HostPortError)

    public var description: String {
        switch self {
        case .notWebSocketURL: "not a ws:// or wss:// URL"
        case .noHost: "no host"
        case .userInformation: "user information in the URL is not supported"
        case .badAuthority(let error): error.description
        }
    }
}
