import Capture

/// `server.pong-missing` (server): no pong reached the client within the pong timeout of
/// its ping. A pong swallowed by an injected fault is reported as caused by it.
public struct ServerPongMissing: LifecycleRule {
    public static let id = "server.pong-missing"
    public static let severity = Severity.warning
    public static let party = Party.server
    public static let summary = "the server answers a ping within the pong timeout"
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
        let deadline = ping.t + stale.pongTimeout
        if let pong = view.pongSincePing, pong.t <= deadline { return Micros.max }
        if let dropped = view.droppedAt, dropped <= deadline { return Micros.max }
        return deadline
    }

    public mutating func advance(to now: Micros, _ context: RuleContext) -> [Finding] {
        guard let stale = spec.stale, let view = context.currentConnection, let ping = view.lastPing,
              ping != reportedPing else { return [] }
        let deadline = ping.t + stale.pongTimeout
        if let pong = view.pongSincePing, pong.t <= deadline { return [] }
        guard now > deadline else { return [] }
        if let dropped = view.droppedAt, dropped <= deadline { return [] }
        reportedPing = ping
        return [finding(context, conn: view.conn, t: deadline,
                        "no pong \(formatSeconds(now - ping.t)) after the ping > pong timeout \(formatSeconds(stale.pongTimeout))",
                        evidence: [ping])]
    }
}
