import Capture
import Vocabulary

/// `agora.backoff-schedule`: within the first phase after an interruption (2 minutes for
/// Agora), attempt n comes base * 2^(n-1) (2, 4, 8, 16 s) after the previous failure,
/// within the timing tolerance.
public struct AgoraBackoffSchedule: PhaseScheduleRule {
    public static let id = "agora.backoff-schedule"
    public static let severity = Severity.error
    public static let summary = "attempt n comes 2^n s after the previous one within 2 minutes of an interruption"
    let spec: LifecycleSpec
    public init(spec: LifecycleSpec) { self.spec = spec }

    func breach(_ check: ScheduleCheck, tolerance: Micros) -> String? {
        guard check.breaksPhase(tolerance: tolerance) else { return nil }
        return "delay \(formatSeconds(check.delay)) != expected \(formatSeconds(check.bound)) ± \(formatSeconds(tolerance)) for attempt \(check.attempt.number)"
    }
}
