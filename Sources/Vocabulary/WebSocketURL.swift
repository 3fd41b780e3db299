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
    /// A URL is printable ASCII without spaces (RFC 3986: anything else is percent-encoded):
    /// a CR LF in the path would otherwise reach the request line sent to the server as a
    /// second header or request, and a control character the terminal showing the URL.
    public static func parse(_ text: String) -> Result<WebSocketURL, WebSocketURLError> {
        if let bad = text.unicodeScalars.first(where: { $0.value < 0x21 || $0.value > 0x7E }) {
            return .failure(.badCharacter(bad.value))
        }
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
    /// A character that a URL cannot hold unencoded (a control, a space, non-ASCII): its code.
    case badCharacter(UInt32)

    public var description: String {
        switch self {
        case .notWebSocketURL: "not a ws:// or wss:// URL"
        case .noHost: "no host"
        case .userInformation: "user information in the URL is not supported"
        case .badAuthority(let error): error.description
        case .badCharacter(let code):
            "U+\(String(code, radix: 16, uppercase: true).leftPadded(to: 4)) is not allowed in a URL: it is printable ASCII "
                + "without spaces or control characters (percent-encode anything else)"
        }
    }
}

extension String {
    /// The text with "0" in front up to `width` characters: "D" -> "000D".
    func leftPadded(to width: Int) -> String { String(repeating: "0", count: max(0, width - count)) + self }
}
