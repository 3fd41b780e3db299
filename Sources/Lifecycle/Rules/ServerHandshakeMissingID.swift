import Capture

/// `server.handshake-missing-id` (server): the server's handshake carries no `socket_id`.
public struct ServerHandshakeMissingID: LifecycleRule {
    public static let id = "server.handshake-missing-id"
    public static let severity = Severity.error
    public static let party = Party.server
    public static let summary = "the server's handshake carries a socket_id"
    public static let observes: StepKinds = .handshake
    public init(spec: LifecycleSpec) {}

    public mutating func observe(_ step: TimelineStep, _ context: RuleContext) -> [Finding] {
        guard case .handshake(let h) = step, h.socketID == nil else { return [] }
        // A handshake a fault rewrote (`strip-socket-id`) is the fault's doing, not the server's.
        return [finding(context, conn: h.conn, t: h.t, "handshake without socket_id", evidence: [h.evidence],
                        fault: h.rewrittenBy)]
    }
}
