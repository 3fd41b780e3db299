import Capture

/// `failed.retried`: a new connection after a refusal close (4000-4099 for Bird): the
/// `failed` state never retries by itself.
public struct FailedRetried: LifecycleRule {
    public static let id = "failed.retried"
    public static let severity = Severity.error
    public static let summary = "no new connection after a refusal (state failed)"
    public static let observes: StepKinds = .attempt
    public init(spec: LifecycleSpec) {}

    /// The shared judgement, also used by `agora.failed-retried`.
    static func check(_ step: TimelineStep) -> (Attempt, Drop)? {
        guard case .attempt(let attempt) = step, let drop = attempt.previousDrop, drop.action == .fail else { return nil }
        return (attempt, drop)
    }

    public mutating func observe(_ step: TimelineStep, _ context: RuleContext) -> [Finding] {
        guard let (attempt, drop) = Self.check(step) else { return [] }
        return [finding(context, conn: attempt.conn, t: attempt.t,
                        "new connection \(formatSeconds(attempt.t - drop.t)) after \(drop.cause) (state \(drop.newState) must not retry)",
                        evidence: [drop.evidence, attempt.evidence], after: drop.fault)]
    }
}
