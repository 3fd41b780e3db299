import Vocabulary
import WebSocket

/// permessage-deflate made safe for dropped messages (RFC 7692 7.1.1): a connection that
/// has faults may have messages dropped (`drop-message`, `stall-pongs`, an operator's
/// intercept), and with context takeover the receiver of a compressed stream cannot inflate
/// the message after one it never got. So the offer sent upstream asks for no context
/// takeover either way, and the 101 relayed to the client binds it to none
/// (`DeflateContextTakeover`). Both rewrites are noted in the capture; a server that keeps
/// its context takeover is warned about, since its messages still may not be dropped safely.
extension RelaySession {
    /// Whether faults act on this connection, so messages may be dropped: a rule given at
    /// start, or a fault engine consulted for rules added later (the control API, the UI).
    var mayDropMessages: Bool { faults != nil }

    /// Rewrites the extension offer of the request going upstream when messages may be dropped.
    mutating func askNoContextTakeover(_ request: inout HTTPRequestHead, now: Micros, into out: inout [RelayCommand]) {
        guard mayDropMessages, let headers = DeflateContextTakeover.offer(request.headers) else { return }
        request.headers = headers
        askedNoContextTakeover = true
        out.append(note(.info, "permessage-deflate: asked the upstream for server_no_context_takeover and "
                            + "client_no_context_takeover, since faults may drop messages and a dropped compressed "
                            + "message would desync the receiver's inflater (RFC 7692 7.1.1)", now: now))
    }

    /// The upstream's 101 head as the client gets it: naming `client_no_context_takeover`
    /// when the offer asked for it and the server did not name it.
    mutating func noContextTakeoverHead(_ response: HTTPResponseHead, head: [UInt8], now: Micros,
                                        into out: inout [RelayCommand]) -> [UInt8] {
        guard askedNoContextTakeover, let agreed = DeflateParameters.negotiated(in: response.headers) else { return head }
        if !agreed.serverNoContextTakeover {
            out.append(note(.warning, "permessage-deflate: the upstream declined server_no_context_takeover; a server "
                                + "message a fault drops may desync the client's inflater (its next compressed message "
                                + "cannot be inflated)", now: now))
        }
        guard let headers = DeflateContextTakeover.response(response.headers) else { return head }
        var rewritten = response
        rewritten.headers = headers
        out.append(note(.info, "permessage-deflate: added client_no_context_takeover to the 101 relayed to the client, "
                            + "so that a client message a fault drops cannot desync the server's inflater", now: now))
        return rewritten.serialized
    }
}
