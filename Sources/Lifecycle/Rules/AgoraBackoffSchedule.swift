import Capture

/// `agora.backoff-schedule`: within the first phase after an interruption (2 minutes for
/// Agora), attempt n comes base * 2^(n-1) (2, 4, 8, 16 s) after the previous failure,
/// within the timing tolerance.
public struct AgoraBackoffSchedule: LifecycleRule {
    public static let id = "agora.backoff-schedule"
    public static let severity = Severity.error
    public static let summary = "attempt n comes 2^n s after the previous one within 2 minutes of an interruption"
    public static let observes: StepKinds = .attempt
    let spec: LifecycleSpec
    public init(spec: LifecycleSpec) { self.spec = spec }

    public mutating func observe(_ step: TimelineStep, _ context: RuleContext) -> [Finding] {
        guard case .attempt(let attempt) = step, let check = ScheduleCheck(attempt, spec: spec),
              check.phase.rule == Self.id else { return [] }
        let tolerance = spec.tolerances.timing
        guard check.breaksPhase(tolerance: tolerance) else { return [] }
        return [finding(context, conn: attempt.conn, t: attempt.t,
                        "delay \(formatSeconds(check.delay)) != expected \(formatSeconds(check.bound)) ± \(formatSeconds(tolerance)) for attempt \(attempt.number)",
                        evidence: check.evidence)]
    }
}
