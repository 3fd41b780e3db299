import Capture

/// `close.immediate-retry`: after a close in a retry-now band (4200-4299 for Bird) the next
/// attempt must come within the immediate tolerance.
public struct CloseImmediateRetry: LifecycleRule {
    public static let id = "close.immediate-retry"
    public static let severity = Severity.error
    public static let summary = "after a 4200-4299 close the client reconnects immediately"
    public static let observes: StepKinds = .attempt
    let spec: LifecycleSpec
    public init(spec: LifecycleSpec) { self.spec = spec }

    public mutating func observe(_ step: TimelineStep, _ context: RuleContext) -> [Finding] {
        guard case .attempt(let attempt) = step, let drop = attempt.previousDrop, drop.action == .immediate,
              let delay = attempt.delay, delay > spec.tolerances.immediate else { return [] }
        return [finding(context, conn: attempt.conn, t: attempt.t,
                        "delay \(formatSeconds(delay)) > bound \(formatSeconds(spec.tolerances.immediate)) after \(drop.cause)",
                        evidence: [drop.evidence, attempt.evidence])]
    }
}
