import Capture
import Vocabulary

/// `stale.close-code`: the client closed a stale connection (dead by its liveness model:
/// its ping unanswered for the pong timeout, or no server ping for the ping interval +
/// timeout; `StaleSpec.missed`) with a code outside the stale band (4200-4299 for Bird), or without a
/// close frame at all: a TCP FIN or RST from the client (a WebSocket library's heartbeat
/// ending the transport) is a stale close with no code, whether it comes a little before or
/// a little after the pong timeout's tolerance; when it is late, `stale.close-missing`
/// reports the lateness as well.
public struct StaleCloseCode: LifecycleRule {
    public static let id = "stale.close-code"
    public static let severity = Severity.error
    public static let summary = "a stale close uses a 4200-4299 code"
    public static let observes: StepKinds = .drop
    let spec: LifecycleSpec
    public init(spec: LifecycleSpec) { self.spec = spec }

    public mutating func observe(_ step: TimelineStep, _ context: RuleContext) -> [Finding] {
        guard let stale = spec.stale, case .drop(let drop) = step, drop.closedBy == .client,
              let view = context.connections[drop.conn],
              let (ping, what) = stale.missed(view, at: drop.t, tolerance: spec.tolerances.timing) else { return [] }
        let expected = "expected a close frame with \(stale.closeBand.from)-\(stale.closeBand.to)"
        guard let code = drop.closeCode else {
            // A close frame without a code, or the transport ended with no close frame.
            let how = view.clientClose == nil ? "ended the connection (\(drop.cause)) without a close frame"
                : "closed without a close code"
            return [finding(context, conn: drop.conn, t: drop.t,
                            "stale close: \(how) \(formatSeconds(drop.t.subtractingSaturated(ping.t))) after \(what), \(expected)",
                            evidence: [ping, drop.evidence])]
        }
        guard !stale.closeBand.contains(code) else { return [] }
        return [finding(context, conn: drop.conn, t: drop.t,
                        "stale close used code \(code), expected \(stale.closeBand.from)-\(stale.closeBand.to)",
                        evidence: [ping, drop.evidence])]
    }
}
