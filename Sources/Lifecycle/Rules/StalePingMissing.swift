import Capture
import Vocabulary

/// `stale.ping-missing`: the client's ping did not come when its liveness model makes it
/// due: after activity timeout + tolerance without receiving anything (ping after
/// silence), interval + tolerance after its previous heartbeat (heartbeat), or keep-alive
/// interval + tolerance after the last message it sent (server timeout). The
/// server-ping model has the client send no pings, so nothing is due. Judged on record
/// times and at the end, never on the wall clock.
public struct StalePingMissing: TimerOnlyRule {
    public static let id = "stale.ping-missing"
    public static let severity = Severity.error
    public static let summary = "the client pings after the activity timeout without traffic"
    let spec: LifecycleSpec
    /// The silence already reported: (connection, last receipt).
    var reported: (ConnectionID, Micros)?
    public init(spec: LifecycleSpec) { self.spec = spec }

    /// Silent until the deadline; a later receipt only moves the deadline later.
    public func quietUntil(_ context: RuleContext) -> Micros {
        guard let stale = spec.stale else { return Micros.max }
        // The connection's times, not its view: see `ConnectionTimes`.
        guard let view = context.currentTimes, view.droppedAt == nil, view.clientClose == nil,
              let (_, due) = stale.pingDue(view) else { return Micros.max }
        return due.addingSaturated(spec.tolerances.timing)
    }

    public mutating func advance(to now: Micros, _ context: RuleContext) -> [Finding] {
        // Nothing is due up to the deadline `quietUntil` gives (both models' deadline is
        // the one checked below): most walks stop here, without copying the view out.
        guard now > quietUntil(context) else { return [] }
        guard let stale = spec.stale, let view = context.currentConnection, view.connectedAt != nil,
              view.droppedAt == nil, view.clientClose == nil else { return [] }
        if stale.model == .heartbeat { return heartbeatMissing(at: now, view, stale, context) }
        if stale.model == .serverTimeout { return keepAliveMissing(at: now, view, stale, context) }
        guard stale.model == .pingAfterSilence else { return [] }
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

    /// Heartbeat: the next one is due `interval` after the previous one (or after
    /// connecting), whatever the traffic; a late one is seen passing its deadline before
    /// it arrives, since time advances before each record is handled.
    private mutating func heartbeatMissing(at now: Micros, _ view: ConnectionView, _ stale: LifecycleSpec.StaleSpec,
                                           _ context: RuleContext) -> [Finding] {
        guard let (since, due) = stale.pingDue(view) else { return [] }
        // A heartbeat still unanswered is followed by a close, not by the next heartbeat:
        // `stale.close-missing` owns that case.
        if let ping = view.lastPing, ping.t >= since, stale.answer(in: view) == nil { return [] }
        let deadline = due.addingSaturated(spec.tolerances.timing)
        guard now > deadline else { return [] }
        if let reported, reported == (view.conn, since) { return [] }
        reported = (view.conn, since)
        let last = view.lastPing.flatMap { $0.t >= since ? $0 : nil }
        let what = last.map { _ in "the last one at \(formatSeconds(since))" } ?? "connecting at \(formatSeconds(since))"
        return [finding(context, conn: view.conn, t: deadline,
                        "no heartbeat within \(formatSeconds(deadline - since)) of \(what) (interval \(formatSeconds(stale.interval)) + tolerance)",
                        evidence: last.map { [$0] } ?? [])]
    }
}
