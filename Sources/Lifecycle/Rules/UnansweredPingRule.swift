import Capture
import Vocabulary

/// The shape of the rules that watch the client's latest ping for something that must
/// happen by a deadline (`server.pong-missing`, `stale.close-missing`): each ping is
/// reported at most once, at its deadline, unless what the rule waits for came in time or
/// the connection ended first. A rule says only when the deadline is and what settles it;
/// the timer bookkeeping behind `quietUntil` and `advance` is shared here, so the two can't
/// drift apart. A rule that also watches something else (`stale.close-missing`) writes its
/// own witnesses and calls the pieces below.
protocol UnansweredPingRule: TimerOnlyRule {
    var spec: LifecycleSpec { get }
    /// The last ping reported, so a ping is reported once.
    var reportedPing: Evidence? { get set }
    /// When the deadline of the ping sent at `pingAt` passes, or nil if the connection
    /// already settled it: the answer the rule waits for arrived in time (a later receipt
    /// never changes this). From the connection's times alone (`ConnectionTimes`), since
    /// every walk of the client's timers asks.
    func deadline(afterPingAt pingAt: Micros, in view: ConnectionTimes, stale: LifecycleSpec.StaleSpec) -> Micros?
    /// The finding's text and evidence, `now` being when the deadline was seen passed.
    func report(ping: Evidence, in view: ConnectionView, stale: LifecycleSpec.StaleSpec, now: Micros) -> (String, [Evidence])
    /// The injected fault that explains the finding, if one does (default: none).
    func cause(in view: ConnectionView) -> String?
}

extension UnansweredPingRule {
    func cause(in view: ConnectionView) -> String? { nil }

    public func quietUntil(_ context: RuleContext) -> Micros { quietUntilDeadline(context) }
    public mutating func advance(to now: Micros, _ context: RuleContext) -> [Finding] { reportIfOverdue(at: now, context) }
    public func undetermined(at now: Micros, _ context: RuleContext) -> [Undetermined] { openPing(at: now, context) }

    /// The ping being watched and its deadline; nil when there is nothing left to report.
    private func watched(_ context: RuleContext) -> (view: ConnectionView, ping: Evidence, deadline: Micros)? {
        guard let stale = spec.stale, let view = context.currentConnection, let ping = view.lastPing, ping != reportedPing,
              let deadline = deadline(afterPingAt: ping.t, in: ConnectionTimes(view), stale: stale) else { return nil }
        // A connection that ended by the deadline owes nothing.
        if let dropped = view.droppedAt, dropped <= deadline { return nil }
        return (view, ping, deadline)
    }

    /// `watched`'s deadline alone, from the connection's times (no copy of its view): what
    /// every walk of the timers asks, while `watched` is for the rare finding.
    private func watchedDeadline(_ context: RuleContext) -> Micros? {
        guard let stale = spec.stale, let view = context.currentTimes, let pingAt = view.lastPing,
              !isReported(pingAt: pingAt, context),
              let deadline = deadline(afterPingAt: pingAt, in: view, stale: stale) else { return nil }
        if let dropped = view.droppedAt, dropped <= deadline { return nil }
        return deadline
    }

    /// Whether the current connection's latest ping, sent at `pingAt`, is the one reported
    /// (`watched`'s `ping != reportedPing`): the whole evidence is compared only when the
    /// times match, which is only after its finding.
    private func isReported(pingAt: Micros, _ context: RuleContext) -> Bool {
        guard let reportedPing, reportedPing.t == pingAt else { return false }
        return context.withCurrentConnection { $0.lastPing == reportedPing } ?? false
    }

    func quietUntilDeadline(_ context: RuleContext) -> Micros { watchedDeadline(context) ?? Micros.max }

    /// The watched ping whose deadline had not passed when the input ended at `now`.
    func openPing(at now: Micros, _ context: RuleContext) -> [Undetermined] {
        guard let (view, ping, deadline) = watched(context), now <= deadline else { return [] }
        return [undetermined(context, conn: view.conn, t: ping.t, deadline: deadline,
                             "ping at \(formatSeconds(ping.t)) not answered yet; the capture ended at \(formatSeconds(now)), before its deadline at \(formatSeconds(deadline))")]
    }

    mutating func reportIfOverdue(at now: Micros, _ context: RuleContext) -> [Finding] {
        guard let due = watchedDeadline(context), now > due else { return [] }
        guard let stale = spec.stale, let (view, ping, deadline) = watched(context), now > deadline else { return [] }
        reportedPing = ping
        let (message, evidence) = report(ping: ping, in: view, stale: stale, now: now)
        return [finding(context, conn: view.conn, t: deadline, message, evidence: evidence, fault: cause(in: view))]
    }
}
