/// The permessage-deflate negotiation as a relay that may drop messages rewrites it
/// (RFC 7692 7.1.1). With context takeover, each compressed message may refer back to
/// the messages before it; a receiver that never got one of them cannot inflate the next,
/// and fails the connection. So a relay that drops a message must keep both senders from
/// taking over their context:
///
/// - the offer sent upstream asks for `server_no_context_takeover` (7.1.1.1: the server
///   accepts it by naming it in its response) and hints `client_no_context_takeover`;
/// - the 101 relayed to the client names `client_no_context_takeover`, which a server may
///   add to any response (7.1.1.2) and which binds the client.
///
/// Pure text rewriting of `Sec-WebSocket-Extensions` fields; the other headers, the other
/// extensions and every other parameter stay as they were.
public enum DeflateContextTakeover {
    static let header = "Sec-WebSocket-Extensions"
    static let serverParameter = "server_no_context_takeover"
    static let clientParameter = "client_no_context_takeover"

    /// The request's headers with every permessage-deflate offer asking for both
    /// parameters; nil when it offers no permessage-deflate or every offer already asks.
    public static func offer(_ headers: [HeaderField]) -> [HeaderField]? {
        rewrite(headers, adding: [serverParameter, clientParameter], firstOnly: false)
    }

    /// The 101's headers with the accepted permessage-deflate naming
    /// `client_no_context_takeover`; nil when none was accepted or it already does.
    public static func response(_ headers: [HeaderField]) -> [HeaderField]? {
        rewrite(headers, adding: [clientParameter], firstOnly: true)
    }

    /// Adds the missing `parameters` to permessage-deflate elements (only the first one
    /// found with `firstOnly`: a response accepts one). Fields that need nothing keep
    /// their exact text.
    private static func rewrite(_ headers: [HeaderField], adding parameters: [String], firstOnly: Bool) -> [HeaderField]? {
        var headers = headers
        var changed = false
        var seen = false
        for i in headers.indices where headers[i].name.lowercased() == header.lowercased() {
            var elements = headers[i].value.split(separator: ",", omittingEmptySubsequences: false).map(String.init)
            var fieldChanged = false
            for j in elements.indices {
                guard !(firstOnly && seen) else { break }
                let parts = elements[j].split(separator: ";").map { $0.trimmingHTTPWhitespace() }
                guard parts.first?.lowercased() == "permessage-deflate" else { continue }
                seen = true
                let names = Set(parts.dropFirst().map { $0.split(separator: "=").first.map { $0.trimmingHTTPWhitespace().lowercased() } ?? "" })
                let missing = parameters.filter { !names.contains($0) }
                guard !missing.isEmpty else { continue }
                let lead = elements[j].prefix { $0 == " " || $0 == "\t" }
                elements[j] = lead + (parts.filter { !$0.isEmpty } + missing).joined(separator: "; ")
                fieldChanged = true
            }
            if fieldChanged {
                headers[i].value = elements.joined(separator: ",")
                changed = true
            }
        }
        return changed ? headers : nil
    }
}
