import Protocols

/// The shape of the faults that rewrite the server's handshake event (`activity-timeout`,
/// `strip-socket-id`): the first server text frame the connection's protocol entry decodes
/// as `.connectionEstablished` is rewritten once, by the entry, in its own envelope; a
/// compressed one is relayed as is, and said so. A fault says only what to change and how
/// to report it; finding the handshake is shared here.
protocol HandshakeRewriteFault: Fault {
    /// The handshake was seen (the first one is the only one rewritten).
    var done: Bool { get set }
    /// What the entry changes in the handshake.
    var change: HandshakeChange { get }
    /// The report of the rewrite, `previous` being the value it replaced (nil: none).
    func report(previous: String?) -> String
}

extension HandshakeRewriteFault {
    public static var openConnectionRefusal: String? {
        "\(kind) rewrites the server's handshake event, which an open connection has already received"
    }

    public mutating func apply(_ event: FaultEvent, context: inout FaultContext) -> FaultVerdict {
        guard !done, case .frame(let frame) = event, frame.from == .server, frame.opcode == .text,
              let handshake = frame.event, handshake.kind == .connectionEstablished
        else { return .pass }
        done = true
        guard !frame.compressed else {
            return FaultVerdict(report: "cannot rewrite a compressed handshake; relayed as is", target: .client)
        }
        guard let rewritten = context.wire?.rewriteHandshake(frame.payload, event: handshake, change) else { return .pass }
        return FaultVerdict(frame: .rewrite(rewritten.payload), report: report(previous: rewritten.previous), target: .client)
    }
}
