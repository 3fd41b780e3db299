import Capture

/// `stale.close-code`: the client closed a stale connection (its ping unanswered for the
/// pong timeout) with a code outside the stale band (4200-4299 for Bird).
public struct StaleCloseCode: LifecycleRule {
    public static let id = "stale.close-code"
    public static let severity = Severity.error
    public static let summary = "a stale close uses a 4200-4299 code"
    public static let observes: StepKinds = .drop
    let spec: LifecycleSpec
    public init(spec: LifecycleSpec) { self.spec = spec }

    public mutating func observe(_ step: TimelineStep, _ context: RuleContext) -> [Finding] {
        guard let stale = spec.stale, case .drop(let drop) = step, drop.closedBy == .client,
              let code = drop.closeCode, let view = context.connections[drop.conn], let ping = view.lastPing else { return [] }
        let unansweredUntil = ping.t.addingSaturated(stale.pongTimeout)
        if let answer = view.receivedSincePing, answer.t <= unansweredUntil { return [] }
        guard drop.t >= unansweredUntil.subtractingSaturated(spec.tolerances.timing), !stale.closeBand.contains(code) else { return [] }
        return [finding(context, conn: drop.conn, t: drop.t,
                        "stale close used code \(code), expected \(stale.closeBand.from)-\(stale.closeBand.to)",
                        evidence: [ping, drop.evidence])]
    }
}
