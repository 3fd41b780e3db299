import Capture

/// `backoff.bound`: a full-jitter reconnect waited longer than min(cap, base * 2^(n-1)) + tolerance.
/// A delay that fits the bound of a client that never reset is `backoff.reset` instead.
public struct BackoffBound: LifecycleRule {
    public static let id = "backoff.bound"
    public static let severity = Severity.error
    public static let summary = "reconnect delay of attempt n within min(cap, base * 2^(n-1)) + tolerance"
    public static let observes: StepKinds = .attempt
    let spec: LifecycleSpec
    public init(spec: LifecycleSpec) { self.spec = spec }

    public mutating func observe(_ step: TimelineStep, _ context: RuleContext) -> [Finding] {
        guard case .attempt(let attempt) = step, let check = ScheduleCheck(attempt, spec: spec),
              check.phase.rule == Self.id else { return [] }
        let tolerance = spec.tolerances.timing
        guard check.exceeds(check.bound, tolerance: tolerance) else { return [] }
        if BackoffReset.explains(check, spec: spec) { return [] }
        return [finding(context, conn: attempt.conn, t: attempt.t,
                        "delay \(formatSeconds(check.delay)) > bound \(formatSeconds(check.bound)) for attempt \(attempt.number) (tolerance \(formatSeconds(tolerance)))",
                        evidence: check.evidence)]
    }
}
