import Capture
import Vocabulary

/// The reconnect-schedule arithmetic shared by the backoff rules: which phase a wait was
/// in, and the bound (full jitter) or expected delay (no jitter) of the attempt.
struct ScheduleCheck {
    var phase: LifecycleSpec.BackoffPhase
    var delay: Micros
    var bound: Micros
    /// The bound had the client not reset its counter after its last success.
    var boundWithoutReset: Micros
    var attempt: Attempt

    /// Nil unless the attempt follows a backoff drop.
    init?(_ attempt: Attempt, spec: LifecycleSpec) {
        guard let drop = attempt.previousDrop, drop.action == .backoff, let delay = attempt.delay,
              let phase = spec.phase(at: drop.t - (attempt.interruptedAt ?? drop.t)) else { return nil }
        self.phase = phase
        self.delay = delay
        self.attempt = attempt
        self.bound = phase.bound(attempt: attempt.number)
        self.boundWithoutReset = phase.bound(attempt: attempt.numberWithoutReset)
    }

    /// Full jitter: the delay exceeds bound + tolerance.
    func exceeds(_ bound: Micros, tolerance: Micros) -> Bool { delay > bound + tolerance }

    /// No jitter: the delay is off the expected value by more than the tolerance.
    func offSchedule(tolerance: Micros) -> Bool { abs(delay - bound) > tolerance }

    /// The delay breaks its phase: off the fixed schedule for a phase without jitter, over
    /// the bound for one with jitter.
    func breaksPhase(tolerance: Micros) -> Bool {
        phase.jitter == .none ? offSchedule(tolerance: tolerance) : exceeds(bound, tolerance: tolerance)
    }

    var evidence: [Evidence] {
        [attempt.previousDrop.map(\.evidence), attempt.evidence].compactMap { $0 }
    }
}
