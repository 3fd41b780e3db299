import Capture
import Vocabulary

/// `stale.close-missing`: the client kept a dead connection open. After its ping (or
/// heartbeat) went unanswered for the pong timeout, it did not close within pong timeout +
/// tolerance of the ping; with server pings, it heard no ping for the ping interval + ping
/// timeout and did not close within that + tolerance; with a server timeout, it heard no
/// message for the server timeout and did not close within that + tolerance.
public struct StaleCloseMissing: UnansweredPingRule {
    public static let id = "stale.close-missing"
    public static let severity = Severity.error
    public static let summary = "the client closes a connection whose ping went unanswered"
    let spec: LifecycleSpec
    var reportedPing: Evidence?
    /// Server pings: the silence already reported (its start).
    var reportedSilence: Evidence?
    public init(spec: LifecycleSpec) { self.spec = spec }

    private var serverDriven: Bool { spec.stale?.watchesServerSilence == true }

    public func quietUntil(_ context: RuleContext) -> Micros {
        serverDriven ? silence(context)?.deadline ?? Micros.max : quietUntilDeadline(context)
    }
    public mutating func advance(to now: Micros, _ context: RuleContext) -> [Finding] {
        serverDriven ? reportSilence(at: now, context) : reportIfOverdue(at: now, context)
    }
    /// A silence the input ended inside is no open check (as a silence before a ping is
    /// due is none for `stale.ping-missing`): only a client ping waiting for its answer is.
    public func undetermined(at now: Micros, _ context: RuleContext) -> [Undetermined] {
        serverDriven ? [] : openPing(at: now, context)
    }

    /// Server pings: the silence being watched on the open connection, and when the client
    /// must have closed it.
    private func silence(_ context: RuleContext) -> (view: ConnectionView, since: Evidence, deadline: Micros)? {
        guard let stale = spec.stale, let view = context.currentConnection, view.isOpen,
              let (since, deadline) = stale.serverSilenceDeadline(view), since != reportedSilence else { return nil }
        return (view, since, deadline.addingSaturated(spec.tolerances.timing))
    }

    private mutating func reportSilence(at now: Micros, _ context: RuleContext) -> [Finding] {
        guard let (view, since, deadline) = silence(context), now > deadline else { return [] }
        reportedSilence = since
        guard spec.stale?.model == .serverPing else { return [serverTimeoutMissed(view, since: since, deadline: deadline, context)] }
        let what = view.lastServerPing == nil ? "since connecting" : "after the last server ping"
        return [finding(context, conn: view.conn, t: deadline,
                        "no server ping for \(formatSeconds(deadline - since.t - spec.tolerances.timing)) \(what) and the connection still open > bound \(formatSeconds(deadline - since.t)) (ping interval \(formatSeconds(view.serverPingInterval)) + ping timeout \(formatSeconds(view.serverPingTimeout)) + tolerance)",
                        evidence: [since])]
    }

    func deadline(afterPingAt pingAt: Micros, in view: ConnectionTimes, stale: LifecycleSpec.StaleSpec) -> Micros? {
        let unansweredUntil = pingAt.addingSaturated(stale.pongTimeout)
        if let answer = stale.answerTime(in: view), answer <= unansweredUntil { return nil }
        let deadline = unansweredUntil.addingSaturated(spec.tolerances.timing)
        if let close = view.clientClose, close <= deadline { return nil }
        return deadline
    }

    func report(ping: Evidence, in view: ConnectionView, stale: LifecycleSpec.StaleSpec, now: Micros) -> (String, [Evidence]) {
        ("no close \(formatSeconds(now - ping.t)) after an unanswered ping > bound \(formatSeconds(stale.pongTimeout + spec.tolerances.timing)) (pong timeout + tolerance)",
         [ping] + (view.clientClose.map { [$0] } ?? []))
    }
}
