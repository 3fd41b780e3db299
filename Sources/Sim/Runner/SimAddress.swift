import Vocabulary

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
        port == 80 ? HostPort.bracketed(host) : HostPort(host: host, port: port).description
    }

    /// Parses a ws:// URL; the error says what is wrong with it.
    public static func parse(_ text: String) throws(SimURLError) -> SimURL {
        let url: WebSocketURL
        switch WebSocketURL.parse(text) {
        case .success(let parsed) where !parsed.secure: url = parsed
        case .success: throw SimURLError("wss:// is not supported by the sim client; use ws://")
        case .failure(.notWebSocketURL): throw SimURLError("expected ws://HOST:PORT/app/KEY, found \"\(text)\"")
        case .failure: throw SimURLError("bad host or port in \"\(text)\"")
        }
        guard url.port > 0, url.target.isEmpty || url.target.hasPrefix("/") else {
            throw SimURLError("bad host or port in \"\(text)\"")
        }
        var target = url.target.isEmpty ? "/" : url.target
        let appKey = SimServerSession.appKey(in: target)
        if !target.contains("?") { target += "?protocol=7&client=faultline-sim&version=\(SimURL.clientVersion)" }
        return SimURL(host: url.host, port: url.port, target: target, appKey: appKey)
    }

    public static let clientVersion = "0.1.0"
}

public struct SimURLError: Error, Sendable, CustomStringConvertible {
    public var message: String
    public init(_ message: String) { self.message = message }
    public var description: String { message }
}
