
/// `HOST:PORT` as given to `--listen` (and `--control`): IPv4, `[IPv6]` or a name.
package struct HostPort: Sendable, Hashable, CustomStringConvertible {
    package init(host: String, port: Int) {
        self.host = host
        self.port = port
    }

    package var host: String
    package var port: Int

    /// Parses `127.0.0.1:8080`, `[::1]:8080`, `localhost:0`. Nil with a reason on failure.
    package static func parse(_ text: String) -> Result<HostPort, HostPortError> {
        guard let colon = text.lastIndex(of: ":") else {
            return .failure(HostPortError("'\(text)' has no port: expected HOST:PORT, such as 127.0.0.1:8080"))
        }
        var host = String(text[..<colon])
        let portText = String(text[text.index(after: colon)...])
        if host.hasPrefix("["), host.hasSuffix("]") {
            host = String(host.dropFirst().dropLast())
        } else if host.contains(":") {
            return .failure(HostPortError("'\(text)': put an IPv6 address in brackets, such as [::1]:8080"))
        }
        guard !host.isEmpty else {
            return .failure(HostPortError("'\(text)' has no host: expected HOST:PORT, such as 127.0.0.1:8080"))
        }
        guard let port = Int(portText), (0...65535).contains(port) else {
            return .failure(HostPortError("'\(text)': port '\(portText)' is not a number from 0 to 65535"))
        }
        return .success(HostPort(host: host, port: port))
    }

    /// `host:port`, with brackets around an IPv6 literal.
    package var description: String { host.contains(":") ? "[\(host)]:\(port)" : "\(host):\(port)" }
}

package struct HostPortError: Error, Sendable, CustomStringConvertible {
    package var description: String
    package init(_ description: String) { self.description = description }
}

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
        let lower = text.lowercased()
        let secure = lower.hasPrefix("wss://")
        guard secure || lower.hasPrefix("ws://") else {
            return .failure(HostPortError("'\(text)' is not a ws:// or wss:// URL: expected ws[s]://HOST:PORT[/PATH]"))
        }
        let rest = text.dropFirst(secure ? 6 : 5)
        let slash = rest.firstIndex(of: "/") ?? rest.endIndex
        let authority = String(rest[..<slash])
        var path = String(rest[slash...])
        if path.contains("?") || path.contains("#") {
            return .failure(HostPortError("'\(text)': the upstream URL takes a path prefix only, no query or fragment"))
        }
        while path.hasSuffix("/") { path.removeLast() }
        guard !authority.isEmpty else { return .failure(HostPortError("'\(text)' has no host: expected ws://HOST:PORT[/PATH]")) }
        if authority.contains("@") { return .failure(HostPortError("'\(text)': user information in the URL is not supported")) }
        let hasPort = authority.hasPrefix("[") ? authority.contains("]:") : authority.contains(":")
        let hostPort = HostPort.parse(hasPort ? authority : authority + (secure ? ":443" : ":80"))
        switch hostPort {
        case .failure(let error):
            return .failure(HostPortError("upstream \(error.description)"))
        case .success(let value):
            guard value.port != 0 else { return .failure(HostPortError("'\(text)': the upstream port cannot be 0")) }
            return .success(UpstreamURL(host: value.host, port: value.port, secure: secure, pathPrefix: path))
        }
    }
}
