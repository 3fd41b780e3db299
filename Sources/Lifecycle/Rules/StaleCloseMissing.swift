import Capture
import Vocabulary

/// `stale.close-missing`: after a ping left unanswered for the pong timeout, the client
/// did not close within pong timeout + tolerance of the ping.
public struct StaleCloseMissing: UnansweredPingRule {
    public static let id = "stale.close-missing"
    public static let severity = Severity.error
    public static let summary = "the client closes a connection whose ping went unanswered"
    public static let observes: StepKinds = []
    public static let hasTimers = true
    let spec: LifecycleSpec
    var reportedPing: Evidence?
    public init(spec: LifecycleSpec) { self.spec = spec }

    public mutating func observe(_ step: TimelineStep, _ context: RuleContext) -> [Finding] { [] }
    public func quietUntil(_ context: RuleContext) -> Micros { quietUntilDeadline(context) }
    public mutating func advance(to now: Micros, _ context: RuleContext) -> [Finding] { reportIfOverdue(at: now, context) }
    public func undetermined(at now: Micros, _ context: RuleContext) -> [Undetermined] { openPing(at: now, context) }

    func deadline(after ping: Evidence, in view: ConnectionView, stale: LifecycleSpec.StaleSpec) -> Micros? {
        let unansweredUntil = ping.t.addingSaturated(stale.pongTimeout)
        if let answer = view.receivedSincePing, answer.t <= unansweredUntil { return nil }
        let deadline = unansweredUntil.addingSaturated(spec.tolerances.timing)
        if let close = view.clientClose, close.t <= deadline { return nil }
        return deadline
    }

    func report(ping: Evidence, in view: ConnectionView, stale: LifecycleSpec.StaleSpec, now: Micros) -> (String, [Evidence]) {
        ("no close \(formatSeconds(now - ping.t)) after an unanswered ping > bound \(formatSeconds(stale.pongTimeout + spec.tolerances.timing)) (pong timeout + tolerance)",
         [ping] + (view.clientClose.map { [$0] } ?? []))
    }
}
