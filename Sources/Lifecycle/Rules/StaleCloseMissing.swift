import Capture

/// `stale.close-missing`: after a ping left unanswered for the pong timeout, the client
/// did not close within pong timeout + tolerance of the ping.
public struct StaleCloseMissing: LifecycleRule {
    public static let id = "stale.close-missing"
    public static let severity = Severity.error
    public static let summary = "the client closes a connection whose ping went unanswered"
    public static let observes: StepKinds = []
    public static let hasTimers = true
    let spec: LifecycleSpec
    var reportedPing: Evidence?
    public init(spec: LifecycleSpec) { self.spec = spec }

    public mutating func observe(_ step: TimelineStep, _ context: RuleContext) -> [Finding] { [] }

    public func quietUntil(_ context: RuleContext) -> Micros {
        guard let stale = spec.stale, let view = context.currentConnection, let ping = view.lastPing,
              ping != reportedPing else { return Micros.max }
        // The same early answers as `advance`, none of which a later receipt changes.
        let unansweredUntil = ping.t + stale.pongTimeout
        if let answer = view.receivedSincePing, answer.t <= unansweredUntil { return Micros.max }
        let deadline = unansweredUntil + spec.tolerances.timing
        if let close = view.clientClose, close.t <= deadline { return Micros.max }
        if let dropped = view.droppedAt, dropped <= deadline { return Micros.max }
        return deadline
    }

    public mutating func advance(to now: Micros, _ context: RuleContext) -> [Finding] {
        guard let stale = spec.stale, let view = context.currentConnection, let ping = view.lastPing,
              ping != reportedPing else { return [] }
        let unansweredUntil = ping.t + stale.pongTimeout
        if let answer = view.receivedSincePing, answer.t <= unansweredUntil { return [] }
        let deadline = unansweredUntil + spec.tolerances.timing
        guard now > deadline else { return [] }
        if let close = view.clientClose, close.t <= deadline { return [] }
        if let dropped = view.droppedAt, dropped <= deadline { return [] }
        reportedPing = ping
        return [finding(context, conn: view.conn, t: deadline,
                        "no close \(formatSeconds(now - ping.t)) after an unanswered ping > bound \(formatSeconds(stale.pongTimeout + spec.tolerances.timing)) (pong timeout + tolerance)",
                        evidence: [ping] + (view.clientClose.map { [$0] } ?? []))]
    }
}
