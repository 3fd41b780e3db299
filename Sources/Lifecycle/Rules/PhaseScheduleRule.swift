import Capture
import Vocabulary

/// The shape of the rules that each own one phase of the reconnect schedule
/// (`backoff.bound`, `agora.backoff-schedule`, `agora.suspended-interval`): the spec names
/// the rule of every phase, and on each reconnect attempt after a backoff drop, the rule of
/// the phase the wait fell in judges its delay. A rule says only what breaks its phase;
/// finding the attempt's phase is shared here, with the `observe` of attempts it runs on.
protocol PhaseScheduleRule: LifecycleRule {
    var spec: LifecycleSpec { get }
    /// What is wrong with this delay, or nil if it keeps the phase's schedule.
    func breach(_ check: ScheduleCheck, tolerance: Micros) -> String?
}

extension PhaseScheduleRule {
    public static var observes: StepKinds { .attempt }
    public mutating func observe(_ step: TimelineStep, _ context: RuleContext) -> [Finding] { judgeAttempt(step, context) }

    func judgeAttempt(_ step: TimelineStep, _ context: RuleContext) -> [Finding] {
        guard case .attempt(let attempt) = step, let check = ScheduleCheck(attempt, spec: spec),
              check.phase.rule == Self.id,
              let message = breach(check, tolerance: spec.tolerances.timing) else { return [] }
        return [finding(context, conn: attempt.conn, t: attempt.t, message, evidence: check.evidence)]
    }
}
