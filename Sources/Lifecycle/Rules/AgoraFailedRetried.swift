import Capture

/// `agora.failed-retried`: an attempt after a fatal refusal (an upgrade refused with a
/// refusal status, or a close in a fail band): state `failed` does not reconnect.
public struct AgoraFailedRetried: LifecycleRule {
    public static let id = "agora.failed-retried"
    public static let severity = Severity.error
    public static let summary = "no attempt after a fatal refusal (state failed)"
    public static let observes: StepKinds = .attempt
    public init(spec: LifecycleSpec) {}

    public mutating func observe(_ step: TimelineStep, _ context: RuleContext) -> [Finding] {
        guard let (attempt, drop) = FailedRetried.check(step) else { return [] }
        return [finding(context, conn: attempt.conn, t: attempt.t,
                        "attempt \(formatSeconds(attempt.t - drop.t)) after fatal \(drop.cause) (state \(drop.newState))",
                        evidence: [drop.evidence, attempt.evidence], after: drop.fault)]
    }
}
