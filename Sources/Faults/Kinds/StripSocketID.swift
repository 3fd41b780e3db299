import Bird
/// `strip-socket-id`: remove `socket_id` from the server's handshake event
/// (`P:connection_established`), a server-side protocol error the client must report.
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
              BirdHandshake.matches(frame.event, suffix: "connection_established", prefixes: context.prefixes)
        else { return .pass }
        done = true
        guard !frame.compressed else {
            return FaultVerdict(report: "cannot rewrite a compressed handshake; relayed as is", target: .client)
        }
        var removed: String?
        guard let rewritten = BirdHandshake.rewriteHandshake(frame.payload, prefixes: context.prefixes, { data in
            removed = data["socket_id"].map { $0.stringValue ?? "\($0)" }
            data["socket_id"] = nil
        }) else { return .pass }
        return FaultVerdict(frame: .rewrite(rewritten),
                            report: "removed socket_id \(removed ?? "(none)") from the handshake", target: .client)
    }
}
