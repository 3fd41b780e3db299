import Capture

/// `agora.suspended-interval`: once the first phase is over without success (state
/// `suspended`), attempts come at the fixed interval (30 s), within the timing tolerance.
public struct AgoraSuspendedInterval: LifecycleRule {
    public static let id = "agora.suspended-interval"
    public static let severity = Severity.error
    public static let summary = "in suspended, attempts are 30 s apart"
    public static let observes: StepKinds = .attempt
    let spec: LifecycleSpec
    public init(spec: LifecycleSpec) { self.spec = spec }

    public mutating func observe(_ step: TimelineStep, _ context: RuleContext) -> [Finding] {
        guard case .attempt(let attempt) = step, let check = ScheduleCheck(attempt, spec: spec),
              check.phase.rule == Self.id else { return [] }
        let tolerance = spec.tolerances.timing
        guard check.breaksPhase(tolerance: tolerance) else { return [] }
        return [finding(context, conn: attempt.conn, t: attempt.t,
                        "interval \(formatSeconds(check.delay)) != \(formatSeconds(check.bound)) ± \(formatSeconds(tolerance)) in state \(check.phase.state)",
                        evidence: check.evidence)]
    }
}
