import Protocols

/// `strip-socket-id`: remove the socket id from the server's handshake event (the event the
/// connection's protocol entry decodes as `.connectionEstablished`, `P:connection_established`
/// under any prefix), a server-side protocol error the client must report. The entry does
/// the rewriting, in its own envelope.
public struct StripSocketID: HandshakeRewriteFault {
    public static let kind = "strip-socket-id"
    public static let summary = "remove socket_id from the server's handshake event"

    var done = false

    public init(_ rule: FaultRule) throws(FaultRuleError) {
        if rule.argument != nil { throw rule.argumentError("strip-socket-id takes no argument") }
    }

    var change: HandshakeChange { .removeSocketID }

    func report(previous: String?) -> String { "removed socket_id \(previous ?? "(none)") from the handshake" }
}
