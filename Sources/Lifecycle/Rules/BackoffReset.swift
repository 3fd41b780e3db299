import Capture

/// `backoff.reset`: the delay breaks the bound of attempt n but fits the bound the client
/// would have if it had not reset its counter after the last successful handshake.
public struct BackoffReset: LifecycleRule {
    public static let id = "backoff.reset"
    public static let severity = Severity.error
    public static let summary = "the backoff counter resets after each successful handshake"
    public static let observes: StepKinds = .attempt
    let spec: LifecycleSpec
    public init(spec: LifecycleSpec) { self.spec = spec }

    static func explains(_ check: ScheduleCheck, spec: LifecycleSpec) -> Bool {
        spec.rules.contains(id) && spec.backoff.resetOnConnect && check.closeBand == nil
            && check.attempt.numberWithoutReset > check.attempt.number
            && !check.exceeds(check.boundWithoutReset, tolerance: spec.tolerances.timing)
    }

    public mutating func observe(_ step: TimelineStep, _ context: RuleContext) -> [Finding] {
        guard case .attempt(let attempt) = step, let check = ScheduleCheck(attempt, spec: spec),
              check.phase.rule == BackoffBound.id, check.phase.jitter != .none, !check.early(tolerance: spec.tolerances.timing),
              check.exceeds(check.bound, tolerance: spec.tolerances.timing),
              Self.explains(check, spec: spec) else { return [] }
        return [finding(context, conn: attempt.conn, t: attempt.t,
                        "delay \(formatSeconds(check.delay)) > bound \(formatSeconds(check.bound)) for attempt \(attempt.number) after a successful handshake; fits bound \(formatSeconds(check.boundWithoutReset)) of attempt \(attempt.numberWithoutReset) without reset",
                        evidence: check.evidence)]
    }
}
