import CLI
import Vocabulary
/// The `--upstream` URL: `ws://HOST[:PORT][/PATH]` (port 80 by default) or
/// `wss://HOST[:PORT][/PATH]` (TLS, port 443 by default).
package struct UpstreamURL: Sendable, Hashable, CustomStringConvertible {
    package init(host: String, port: Int, secure: Bool = false, pathPrefix: String = "") {
        self.host = host
        self.port = port
        self.secure = secure
        self.pathPrefix = pathPrefix
    }

    package var host: String
    package var port: Int
    /// `wss://`: the proxy speaks TLS to the upstream.
    package var secure = false
    /// The path prefix without a trailing slash ("" for none): the client's request target
    /// is appended to it, so `ws://h:1/base` + `/app/key` goes to `/base/app/key`.
    package var pathPrefix: String

    /// "host:port" for the `Host` header and the capture.
    package var hostHeader: String { HostPort(host: host, port: port).description }

    package var description: String { "\(secure ? "wss" : "ws")://\(hostHeader)\(pathPrefix)" }

    package static func parse(_ text: String) -> Result<UpstreamURL, HostPortError> {
        let url: WebSocketURL
        switch WebSocketURL.parse(text) {
        case .success(let parsed): url = parsed
        case .failure(.notWebSocketURL):
            return .failure(HostPortError("'\(text)' is not a ws:// or wss:// URL: expected ws[s]://HOST:PORT[/PATH]"))
        case .failure(.noHost): return .failure(HostPortError("'\(text)' has no host: expected ws://HOST:PORT[/PATH]"))
        case .failure(.userInformation):
            return .failure(HostPortError("'\(text)': user information in the URL is not supported"))
        case .failure(.badAuthority(let error)): return .failure(HostPortError("upstream \(error.description)"))
        case .failure(.badCharacter(let code)):
            return .failure(HostPortError("'\(TerminalText.escape(text))': \(WebSocketURLError.badCharacter(code))"))
        }
        var path = url.target
        if path.contains("?") || path.contains("#") {
            return .failure(HostPortError("'\(text)': the upstream URL takes a path prefix only, no query or fragment"))
        }
        while path.hasSuffix("/") { path.removeLast() }
        guard url.port != 0 else { return .failure(HostPortError("'\(text)': the upstream port cannot be 0")) }
        return .success(UpstreamURL(host: url.host, port: url.port, secure: url.secure, pathPrefix: path))
    }
}
