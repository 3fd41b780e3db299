/// `HOST:PORT` of `--listen`: an IPv4 address, `[IPv6]`, or `localhost`, and a port (0 picks one).
public struct SimListenAddress: Sendable, Hashable {
    public var host: String
    public var port: Int

    public init(host: String, port: Int) {
        self.host = host
        self.port = port
    }

    /// Nil for text that is not HOST:PORT with a port in 0...65535.
    public static func parse(_ text: String) -> SimListenAddress? {
        var host: Substring
        var portText: Substring
        if text.hasPrefix("[") {
            guard let close = text.firstIndex(of: "]"), text[text.index(after: close)...].hasPrefix(":") else { return nil }
            host = text[text.index(after: text.startIndex)..<close]
            portText = text[text.index(close, offsetBy: 2)...]
        } else {
            guard let colon = text.lastIndex(of: ":") else { return nil }
            host = text[..<colon]
            portText = text[text.index(after: colon)...]
            if host.contains(":") { return nil }  // IPv6 needs brackets
        }
        guard !host.isEmpty, let port = Int(portText), (0...65535).contains(port) else { return nil }
        return SimListenAddress(host: String(host), port: port)
    }
}

/// `ws://HOST[:PORT]/app/KEY[?query]`: where a sim client connects and what it asks for.
public struct SimURL: Sendable, Hashable {
    public var host: String
    public var port: Int
    /// Request target: path and query, with the protocol's query added when none was given.
    public var target: String
    /// The app key in the path (`/app/KEY`), nil for another path.
    public var appKey: String?

    /// The Host header: host, and the port unless it is 80.
    public var hostHeader: String {
        let shown = host.contains(":") ? "[\(host)]" : host
        return port == 80 ? shown : "\(shown):\(port)"
    }

    /// Parses a ws:// URL; the error says what is wrong with it.
    public static func parse(_ text: String) throws(SimURLError) -> SimURL {
        guard text.hasPrefix("ws://") else {
            if text.hasPrefix("wss://") { throw SimURLError("wss:// is not supported by the sim client; use ws://") }
            throw SimURLError("expected ws://HOST:PORT/app/KEY, found \"\(text)\"")
        }
        let rest = text.dropFirst(5)
        let slash = rest.firstIndex(of: "/") ?? rest.endIndex
        let authority = String(rest[..<slash])
        var target = String(rest[slash...])
        if target.isEmpty { target = "/" }
        var host = authority
        var port = 80
        if let address = SimListenAddress.parse(authority) {
            host = address.host
            port = address.port
        } else if authority.hasPrefix("[") && authority.hasSuffix("]") {
            host = String(authority.dropFirst().dropLast())
        } else if authority.contains(":") {
            throw SimURLError("bad host or port in \"\(text)\"")
        }
        guard !host.isEmpty, port > 0 else { throw SimURLError("bad host or port in \"\(text)\"") }
        let appKey = SimServerSession.appKey(in: target)
        if !target.contains("?") { target += "?protocol=7&client=faultline-sim&version=\(SimURL.clientVersion)" }
        return SimURL(host: host, port: port, target: target, appKey: appKey)
    }

    public static let clientVersion = "0.1.0"
}

public struct SimURLError: Error, Sendable, CustomStringConvertible {
    public var message: String
    public init(_ message: String) { self.message = message }
    public var description: String { message }
}
