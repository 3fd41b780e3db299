import Capture
import Vocabulary

/// `stale.premature-close`: the client closed with a stale code although the server
/// answered after its ping, or before the pong timeout had passed.
public struct StalePrematureClose: LifecycleRule {
    public static let id = "stale.premature-close"
    public static let severity = Severity.warning
    public static let summary = "a stale close comes only after a ping unanswered for the pong timeout"
    public static let observes: StepKinds = .drop
    let spec: LifecycleSpec
    public init(spec: LifecycleSpec) { self.spec = spec }

    public mutating func observe(_ step: TimelineStep, _ context: RuleContext) -> [Finding] {
        guard let stale = spec.stale, case .drop(let drop) = step, drop.closedBy == .client,
              let code = drop.closeCode, stale.closeBand.contains(code),
              let view = context.connections[drop.conn] else { return [] }
        let message: String
        var evidence = [drop.evidence]
        if let ping = view.lastPing {
            evidence.insert(ping, at: 0)
            if let answer = stale.answer(in: view), answer.t <= drop.t {
                evidence.insert(answer, at: 1)
                message = "closed with \(code) although the server sent a frame \(formatSeconds(answer.t - ping.t)) after the ping"
            } else if drop.t < ping.t.addingSaturated(stale.pongTimeout).subtractingSaturated(spec.tolerances.timing) {
                message = "closed with \(code) \(formatSeconds(drop.t - ping.t)) after the ping < pong timeout \(formatSeconds(stale.pongTimeout))"
            } else {
                return []
            }
        } else {
            // No ping: not a stale close at all (a refused handshake, an app's own reason).
            return []
        }
        return [finding(context, conn: drop.conn, t: drop.t, message, evidence: evidence)]
    }
}
