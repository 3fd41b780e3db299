import Capture
import Vocabulary

/// `reconnect.missing`: after a drop that its policy answers with a retry (a backoff close,
/// FIN/RST, a refused upgrade, a retry-now close), no new connection came by the end of the
/// promised window + tolerance. A client given up by its spec (`maxAttempts`,
/// `giveUpAfter`), refused, or closed by the app owes no retry. When the input ends inside
/// the window the check is undetermined, never passed. Judged when the input ends: a retry
/// that comes late is `backoff.bound`'s finding, not this one's, so until the end a late
/// one may still come.
public struct ReconnectMissing: LifecycleRule {
    public static let id = "reconnect.missing"
    public static let severity = Severity.error
    public static let summary = "a retry the reconnect policy promises comes by the end of its window"
    public static let observes: StepKinds = [.attempt, .drop]
    let spec: LifecycleSpec
    /// The drop whose retry is awaited, and the longest wait its policy allows (before the tolerance).
    var awaited: (drop: Drop, bound: Micros)?
    public init(spec: LifecycleSpec) { self.spec = spec }

    public mutating func observe(_ step: TimelineStep, _ context: RuleContext) -> [Finding] {
        switch step {
        case .attempt: awaited = nil
        case .drop(let drop): awaited = Self.promise(after: drop, spec: spec).map { (drop, $0) }
        default: break
        }
        return []
    }

    /// The longest wait the spec allows before the retry after `drop` (the window's upper
    /// end; the immediate tolerance after a retry-now close), or nil if it owes none.
    static func promise(after drop: Drop, spec: LifecycleSpec) -> Micros? {
        guard drop.newState != spec.states.failed else { return nil }
        switch drop.action {
        case .immediate: return spec.tolerances.immediate
        case .backoff:
            return ScheduleCheck.Expected(after: drop, attempt: drop.nextAttempt, previousDelay: drop.previousDelay,
                                          interruptedAt: drop.interruptedAt, spec: spec)?.window.upper
        case .fail, .disconnect: return nil
        }
    }

    /// The slack on top of the bound: none after a retry-now close (its bound is a tolerance).
    private func tolerance(_ drop: Drop) -> Micros { drop.action == .immediate ? 0 : spec.tolerances.timing }

    /// Where the wait is counted from: the drop, or with `delayFrom: closed` the end of the
    /// close (as the timeline counts the delay), else the close timeout, else the drop.
    private func start(of drop: Drop, _ context: RuleContext) -> Micros {
        guard spec.backoff.delayFrom == .closed else { return drop.t }
        let closed = context.connections[drop.conn]?.closedAt
        let timedOut = spec.backoff.closeTimeout.map { drop.t.addingSaturated($0) }
        return [closed, timedOut].compactMap { $0 }.min() ?? drop.t
    }

    private func deadline(_ context: RuleContext) -> (drop: Drop, bound: Micros, start: Micros, deadline: Micros)? {
        guard let (drop, bound) = awaited else { return nil }
        let start = start(of: drop, context)
        return (drop, bound, start, start.addingSaturated(bound).addingSaturated(tolerance(drop)))
    }

    public mutating func finish(at now: Micros, _ context: RuleContext) -> [Finding] {
        guard let (drop, bound, start, deadline) = deadline(context), now > deadline else { return [] }
        awaited = nil
        let why = drop.action == .immediate ? "retry now: immediate tolerance \(formatSeconds(bound))"
            : "attempt \(drop.nextAttempt): bound \(formatSeconds(bound)) + tolerance \(formatSeconds(tolerance(drop)))"
        return [finding(context, conn: drop.conn, t: deadline,
                        "no reconnect within \(formatSeconds(deadline - start)) of \(drop.cause) (\(why))",
                        evidence: [drop.evidence])]
    }

    public func undetermined(at now: Micros, _ context: RuleContext) -> [Undetermined] {
        guard let (drop, _, _, deadline) = deadline(context), now <= deadline else { return [] }
        return [undetermined(context, conn: drop.conn, t: drop.t, deadline: deadline,
                             "retry after \(drop.cause) not seen yet; the capture ended at \(formatSeconds(now)), before the window closed at \(formatSeconds(deadline))")]
    }
}
