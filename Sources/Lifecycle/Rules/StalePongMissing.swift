import Capture
import Vocabulary

/// `stale.pong-missing`: with server pings (engine.io), the client did not answer the
/// server's ping with a pong within the immediate tolerance. A server that hears no pong
/// gives the connection up, so an unanswering client loses healthy connections. Each ping
/// is judged once; when the input ends inside the window the check is undetermined.
public struct StalePongMissing: TimerOnlyRule {
    public static let id = "stale.pong-missing"
    public static let severity = Severity.error
    public static let summary = "the client answers each server ping with a pong at once"
    let spec: LifecycleSpec
    var reportedPing: Evidence?
    public init(spec: LifecycleSpec) { self.spec = spec }

    /// The server ping waiting for its pong, and the pong's deadline.
    private func watched(_ context: RuleContext) -> (view: ConnectionView, ping: Evidence, deadline: Micros)? {
        guard spec.stale?.model == .serverPing, let view = context.currentConnection, let ping = view.lastServerPing,
              ping != reportedPing else { return nil }
        let deadline = ping.t.addingSaturated(spec.tolerances.immediate)
        if let pong = view.pongToServerPing, pong.t <= deadline { return nil }
        if let dropped = view.droppedAt, dropped <= deadline { return nil }
        return (view, ping, deadline)
    }

    public func quietUntil(_ context: RuleContext) -> Micros { watched(context)?.deadline ?? Micros.max }

    public mutating func advance(to now: Micros, _ context: RuleContext) -> [Finding] {
        guard let (view, ping, deadline) = watched(context), now > deadline else { return [] }
        reportedPing = ping
        let measured = view.pongToServerPing.map { "pong \(formatSeconds($0.t - ping.t)) after the server's ping" }
            ?? "no pong \(formatSeconds(now - ping.t)) after the server's ping"
        return [finding(context, conn: view.conn, t: deadline,
                        "\(measured) > bound \(formatSeconds(spec.tolerances.immediate)) (immediate tolerance)",
                        evidence: [ping] + (view.pongToServerPing.map { [$0] } ?? []))]
    }

    public func undetermined(at now: Micros, _ context: RuleContext) -> [Undetermined] {
        guard let (view, ping, deadline) = watched(context), now <= deadline else { return [] }
        return [undetermined(context, conn: view.conn, t: ping.t, deadline: deadline,
                             "server ping at \(formatSeconds(ping.t)) not answered yet; the capture ended at \(formatSeconds(now)), before its deadline at \(formatSeconds(deadline))")]
    }
}
