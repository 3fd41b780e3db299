import Capture
import Vocabulary

/// `stale.ping-missing`: the client received nothing for activity timeout + tolerance and
/// sent no ping. Judged on record times and at the end, never on the wall clock.
public struct StalePingMissing: LifecycleRule {
    public static let id = "stale.ping-missing"
    public static let severity = Severity.error
    public static let summary = "the client pings after the activity timeout without traffic"
    public static let observes: StepKinds = []
    public static let hasTimers = true
    let spec: LifecycleSpec
    /// The silence already reported: (connection, last receipt).
    var reported: (ConnectionID, Micros)?
    public init(spec: LifecycleSpec) { self.spec = spec }

    public mutating func observe(_ step: TimelineStep, _ context: RuleContext) -> [Finding] { [] }

    /// Silent until the deadline; a later receipt only moves the deadline later.
    public func quietUntil(_ context: RuleContext) -> Micros {
        guard spec.stale != nil, let view = context.currentConnection, view.connectedAt != nil,
              view.droppedAt == nil, view.clientClose == nil else { return Micros.max }
        return view.lastReceivedAt.addingSaturated(view.activityTimeout).addingSaturated(spec.tolerances.timing)
    }

    public mutating func advance(to now: Micros, _ context: RuleContext) -> [Finding] {
        guard spec.stale != nil, let view = context.currentConnection, view.connectedAt != nil,
              view.droppedAt == nil, view.clientClose == nil else { return [] }
        let silenceStart = view.lastReceivedAt
        let deadline = silenceStart.addingSaturated(view.activityTimeout).addingSaturated(spec.tolerances.timing)
        guard now > deadline else { return [] }
        if let ping = view.lastPing, ping.t >= silenceStart, ping.t <= deadline { return [] }
        if let reported, reported == (view.conn, silenceStart) { return [] }
        reported = (view.conn, silenceStart)
        let late = view.lastPing.flatMap { $0.t >= silenceStart ? $0 : nil }
        let measured = late.map { "first ping after \(formatSeconds($0.t - silenceStart))" }
            ?? "silent for \(formatSeconds(now - silenceStart)) without a ping"
        return [finding(context, conn: view.conn, t: deadline,
                        "\(measured) > bound \(formatSeconds(view.activityTimeout + spec.tolerances.timing)) (activity timeout \(formatSeconds(view.activityTimeout)) + tolerance)",
                        evidence: [Evidence(conn: view.conn, t: silenceStart, from: .server, summary: "last frame received")] + (late.map { [$0] } ?? []))]
    }
}
