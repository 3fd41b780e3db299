/// What a server's `Sec-WebSocket-Extensions: permessage-deflate; ...` response agreed
/// (RFC 7692 7.1).
public struct DeflateParameters: Sendable, Hashable {
    public var clientNoContextTakeover = false
    public var serverNoContextTakeover = false
    public var clientMaxWindowBits = 15
    public var serverMaxWindowBits = 15
    public init() {}

    /// The agreed parameters from a response's extension header, nil if not negotiated.
    ///
    /// Lenient on purpose: Faultline decodes what peers actually did, so an unknown
    /// parameter is ignored and a window size outside 8...15 (or missing) stays 15 rather
    /// than making a compressed connection look uncompressed.
    public static func negotiated(in headers: [HeaderField]) -> DeflateParameters? {
        for value in headers.values(named: "Sec-WebSocket-Extensions") {
            for offer in value.split(separator: ",") {
                let parts = offer.split(separator: ";").map { $0.trimmingHTTPWhitespace() }
                guard parts.first?.lowercased() == "permessage-deflate" else { continue }
                var parameters = DeflateParameters()
                for part in parts.dropFirst() {
                    // Never empty, so `pair[0]` exists: an empty parameter ("permessage-deflate; ;"
                    // or a trailing ";") split to no pieces and trapped (the http-head fuzz target).
                    let pair = part.split(separator: "=", maxSplits: 1, omittingEmptySubsequences: false)
                    let name = pair[0].trimmingHTTPWhitespace().lowercased()
                    let raw = pair.count > 1 ? pair[1].trimmingHTTPWhitespace() : nil
                    let bits = raw.flatMap { Int($0.trimmingCharacters(in: "\"")) }.flatMap { (8...15).contains($0) ? $0 : nil }
                    switch name {
                    case "client_no_context_takeover": parameters.clientNoContextTakeover = true
                    case "server_no_context_takeover": parameters.serverNoContextTakeover = true
                    case "client_max_window_bits": parameters.clientMaxWindowBits = bits ?? 15
                    case "server_max_window_bits": parameters.serverMaxWindowBits = bits ?? 15
                    default: continue
                    }
                }
                return parameters
            }
        }
        return nil
    }

    /// The extension header value that states these parameters, defaults left out
    /// (`permessage-deflate; server_no_context_takeover; client_max_window_bits=10`).
    public var headerValue: String {
        var parts = ["permessage-deflate"]
        if serverNoContextTakeover { parts.append("server_no_context_takeover") }
        if clientNoContextTakeover { parts.append("client_no_context_takeover") }
        if serverMaxWindowBits != 15 { parts.append("server_max_window_bits=\(serverMaxWindowBits)") }
        if clientMaxWindowBits != 15 { parts.append("client_max_window_bits=\(clientMaxWindowBits)") }
        return parts.joined(separator: "; ")
    }

    /// An inflater for the messages `side` sends ("client" frames use the client's window
    /// and context-takeover settings).
    public func makeInflater(forMessagesFromClient fromClient: Bool) -> MessageInflater {
        fromClient
            ? MessageInflater(windowBits: clientMaxWindowBits, noContextTakeover: clientNoContextTakeover)
            : MessageInflater(windowBits: serverMaxWindowBits, noContextTakeover: serverNoContextTakeover)
    }

    public func makeDeflater(forMessagesFromClient fromClient: Bool) -> MessageDeflater {
        fromClient
            ? MessageDeflater(windowBits: clientMaxWindowBits, noContextTakeover: clientNoContextTakeover)
            : MessageDeflater(windowBits: serverMaxWindowBits, noContextTakeover: serverNoContextTakeover)
    }
}

extension String {
    fileprivate func trimmingCharacters(in set: Character) -> String {
        var text = Substring(self)
        while text.first == set { text = text.dropFirst() }
        while text.last == set { text = text.dropLast() }
        return String(text)
    }
}
