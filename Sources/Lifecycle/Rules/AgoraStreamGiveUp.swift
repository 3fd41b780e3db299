import Capture
import Vocabulary

/// `agora.stream-give-up`: an attempt more than the give-up time (20 minutes for stream
/// channels) after the interruption; the client must be `failed` by then.
public struct AgoraStreamGiveUp: LifecycleRule {
    public static let id = "agora.stream-give-up"
    public static let severity = Severity.error
    public static let summary = "no attempt more than 20 minutes after the interruption"
    public static let observes: StepKinds = .attempt
    let spec: LifecycleSpec
    public init(spec: LifecycleSpec) { self.spec = spec }

    public mutating func observe(_ step: TimelineStep, _ context: RuleContext) -> [Finding] {
        guard case .attempt(let attempt) = step, let limit = spec.backoff.giveUpAfter,
              let start = attempt.interruptedAt, let drop = attempt.previousDrop, drop.action != .fail,
              attempt.t.subtractingSaturated(start) > limit.addingSaturated(spec.tolerances.timing) else { return [] }
        return [finding(context, conn: attempt.conn, t: attempt.t,
                        "attempt \(formatSeconds(attempt.t - start)) after the interruption > give-up \(formatSeconds(limit))",
                        evidence: [drop.evidence, attempt.evidence])]
    }
}
