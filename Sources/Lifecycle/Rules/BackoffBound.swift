import Capture
import Vocabulary

/// `backoff.bound`: a reconnect's delay fell outside the window its policy allows (for
/// full jitter, longer than min(cap, base * 2^(n-1)) + tolerance; for the other jitters,
/// floors and close-code windows, also shorter than the lower end - tolerance). A delay
/// that fits the bound of a client that never reset is `backoff.reset` instead.
public struct BackoffBound: PhaseScheduleRule {
    public static let id = "backoff.bound"
    public static let severity = Severity.error
    public static let summary = "reconnect delay of attempt n within its policy's window (full jitter: up to min(cap, base * 2^(n-1))) + tolerance"
    let spec: LifecycleSpec
    public init(spec: LifecycleSpec) { self.spec = spec }

    func breach(_ check: ScheduleCheck, tolerance: Micros) -> String? {
        if check.early(tolerance: tolerance) {
            return "delay \(formatSeconds(check.delay)) < lower bound \(formatSeconds(check.window.lower)) \(check.forWhat) (tolerance \(formatSeconds(tolerance)))"
        }
        guard check.exceeds(check.bound, tolerance: tolerance), !BackoffReset.explains(check, spec: spec) else { return nil }
        return "delay \(formatSeconds(check.delay)) > bound \(formatSeconds(check.bound)) \(check.forWhat) (tolerance \(formatSeconds(tolerance)))"
    }
}
