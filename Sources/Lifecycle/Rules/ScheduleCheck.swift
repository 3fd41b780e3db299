import Capture
import Vocabulary

/// The reconnect-schedule arithmetic shared by the backoff rules: which phase a wait was
/// in, and the window of delays its policy allows (`DelayWindow`): the schedule's for the
/// attempt, or the close code's own window when the close that caused it has one.
struct ScheduleCheck {
    var phase: LifecycleSpec.BackoffPhase
    var delay: Micros
    var window: DelayWindow
    /// The bound (full jitter) or expected delay (no jitter): the window's upper end.
    var bound: Micros { window.upper }
    /// The bound had the client not reset its counter after its last success.
    var boundWithoutReset: Micros
    /// The close band whose delay window replaced the schedule, if one did.
    var closeBand: LifecycleSpec.CloseBand?
    /// The floor of the client's short sessions under the window, if one applied.
    var shortSessionFloor: Micros?
    var attempt: Attempt

    /// Nil unless the attempt follows a backoff drop.
    init?(_ attempt: Attempt, spec: LifecycleSpec) {
        guard let drop = attempt.previousDrop, let delay = attempt.delay,
              let expected = Expected(after: drop, attempt: attempt.number, previousDelay: attempt.previousDelay,
                                      interruptedAt: attempt.interruptedAt, spec: spec) else { return nil }
        self.phase = expected.phase
        self.delay = delay
        self.attempt = attempt
        self.window = expected.window
        self.closeBand = expected.closeBand
        self.shortSessionFloor = expected.shortSessionFloor
        self.boundWithoutReset = expected.closeBand == nil
            ? expected.phase.window(attempt: attempt.numberWithoutReset, previousDelay: attempt.previousDelay,
                                    shortSessionFloor: spec.backoff.shortSessionFloor(after: drop.shortSessions)).upper
            : expected.window.upper
    }

    /// What the spec expects of the attempt after a backoff drop, known at the drop: the
    /// phase the wait falls in and its window. `reconnect.missing` asks before the attempt.
    struct Expected {
        var phase: LifecycleSpec.BackoffPhase
        var window: DelayWindow
        var closeBand: LifecycleSpec.CloseBand?
        /// The floor the client's short sessions put under the schedule's window, if any.
        var shortSessionFloor: Micros?

        init?(after drop: Drop, attempt n: Int, previousDelay: Micros?, interruptedAt: Micros?, spec: LifecycleSpec) {
            guard drop.action == .backoff, let phase = spec.phase(at: drop.t - (interruptedAt ?? drop.t)) else { return nil }
            self.phase = phase
            if let code = drop.closeCode, let band = spec.closeBands.first(where: { $0.contains(code) }),
               band.action == .backoff, let delay = band.delay {
                closeBand = band
                window = delay
            } else {
                let short = spec.backoff.shortSessionFloor(after: drop.shortSessions)
                shortSessionFloor = short?.floor
                window = phase.window(attempt: n, previousDelay: previousDelay, shortSessionFloor: short)
            }
        }
    }

    /// The delay exceeds bound + tolerance.
    func exceeds(_ bound: Micros, tolerance: Micros) -> Bool { delay > bound.addingSaturated(tolerance) }

    /// The delay came before the window's lower end, less the tolerance.
    func early(tolerance: Micros) -> Bool { delay < window.lower.subtractingSaturated(tolerance) }

    /// The delay breaks its window on either side (for a phase without jitter: off the
    /// fixed schedule by more than the tolerance).
    func breaksPhase(tolerance: Micros) -> Bool {
        exceeds(bound, tolerance: tolerance) || early(tolerance: tolerance)
    }

    /// "for attempt 3", or "after close 1012" when the close code's window applied.
    var forWhat: String {
        if closeBand != nil, let code = attempt.previousDrop?.closeCode { return "after close \(code)" }
        guard let floor = shortSessionFloor, let count = attempt.previousDrop?.shortSessions else {
            return "for attempt \(attempt.number)"
        }
        return "for attempt \(attempt.number) after \(count) short session\(count == 1 ? "" : "s") (floor \(formatSeconds(floor)))"
    }

    var evidence: [Evidence] {
        [attempt.previousDrop.map(\.evidence), attempt.evidence].compactMap { $0 }
    }
}
