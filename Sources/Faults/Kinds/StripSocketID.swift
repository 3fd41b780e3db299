/// `strip-socket-id`: remove the socket id from the server's handshake event (the event the
/// connection's protocol entry decodes as `.connectionEstablished`, `P:connection_established`
/// under any prefix), a server-side protocol error the client must report. The entry does
/// the rewriting, in its own envelope.
public struct StripSocketID: Fault {
    public static let kind = "strip-socket-id"
    public static let summary = "remove socket_id from the server's handshake event"
    public static let openConnectionRefusal: String? =
        "\(kind) rewrites the server's handshake event, which an open connection has already received"

    var done = false

    public init(_ rule: FaultRule) throws(FaultRuleError) {
        if rule.argument != nil { throw rule.argumentError("strip-socket-id takes no argument") }
    }

    public mutating func apply(_ event: FaultEvent, context: inout FaultContext) -> FaultVerdict {
        guard !done, case .frame(let frame) = event, frame.from == .server, frame.opcode == .text,
              let handshake = frame.event, handshake.kind == .connectionEstablished
        else { return .pass }
        done = true
        guard !frame.compressed else {
            return FaultVerdict(report: "cannot rewrite a compressed handshake; relayed as is", target: .client)
        }
        guard let rewritten = context.wire?.rewriteHandshake(frame.payload, event: handshake, .removeSocketID) else {
            return .pass
        }
        return FaultVerdict(frame: .rewrite(rewritten.payload),
                            report: "removed socket_id \(rewritten.previous ?? "(none)") from the handshake", target: .client)
    }
}
