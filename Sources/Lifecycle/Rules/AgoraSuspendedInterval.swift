import Capture
import Vocabulary

/// `agora.suspended-interval`: once the first phase is over without success (state
/// `suspended`), attempts come at the fixed interval (30 s), within the timing tolerance.
public struct AgoraSuspendedInterval: PhaseScheduleRule {
    public static let id = "agora.suspended-interval"
    public static let severity = Severity.error
    public static let summary = "in suspended, attempts are 30 s apart"
    let spec: LifecycleSpec
    public init(spec: LifecycleSpec) { self.spec = spec }

    func breach(_ check: ScheduleCheck, tolerance: Micros) -> String? {
        guard check.breaksPhase(tolerance: tolerance) else { return nil }
        return "interval \(formatSeconds(check.delay)) != \(formatSeconds(check.bound)) ± \(formatSeconds(tolerance)) in state \(check.phase.state)"
    }
}
