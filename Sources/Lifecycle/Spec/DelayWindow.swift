import Capture
import Vocabulary

/// The delays a reconnect policy allows for one attempt, before the timing tolerance: a
/// delay below `lower` came too early, one above `upper` too late. Full jitter's window is
/// [0, d], so only its upper end can be broken. A close band's own window (`delay`
/// `{"min", "max"}` in a spec) is one too.
public struct DelayWindow: Sendable, Hashable {
    public var lower: Micros
    public var upper: Micros
    public init(lower: Micros, upper: Micros) {
        self.lower = lower
        self.upper = upper
    }
}

extension LifecycleSpec.BackoffPhase {
    /// The window of attempt `n` (from 1). `previousDelay` is the delay of the attempt
    /// before it in the same count (nil for the first), which decorrelated jitter grows from.
    /// `shortSessionFloor` is the floor the client's short sessions put under this delay
    /// (`ShortSessionFloors`), raising d before the jitter or the window after it.
    /// All arithmetic is in floating point and clamped back (`clampedMicros`), so no spec
    /// value or measured delay can trap it.
    public func window(attempt n: Int, previousDelay: Micros?,
                       shortSessionFloor: (floor: Micros, applied: LifecycleSpec.FloorApplied)? = nil) -> DelayWindow {
        let capFirst = capApplied == .beforeJitter
        var d = Double(nominal(attempt: n, capped: capFirst))
        if let short = shortSessionFloor, short.applied == .beforeJitter { d = Swift.max(d, Double(short.floor)) }
        var lower: Double
        var upper: Double
        switch jitter {
        case .full: (lower, upper) = (0, d)
        case .none: (lower, upper) = (d, d)
        case .equal: (lower, upper) = (d / 2, d)
        case .additive: (lower, upper) = (d - Double(jitterSeconds), d + Double(jitterSeconds))
        case .multiplicative: (lower, upper) = (d * (1 - jitterFactor), d * (1 + jitterFactor))
        case .decorrelated:
            // sleep = min(cap, random(base, 3 * previous sleep)), the first grown from base.
            let previous = Double(previousDelay ?? base)
            (lower, upper) = (Double(base), Swift.max(Double(base), 3 * previous))
        }
        if !capFirst || jitter == .decorrelated, let cap {
            lower = Swift.min(lower, Double(cap))
            upper = Swift.min(upper, Double(cap))
        }
        let afterJitter = shortSessionFloor.flatMap { $0.applied == .afterJitter ? $0.floor : nil }
        for floor in [floor, afterJitter].compactMap({ $0 }) {
            lower = Swift.max(lower, Double(floor))
            upper = Swift.max(upper, Double(floor))
        }
        return DelayWindow(lower: clampedMicros(lower), upper: clampedMicros(upper))
    }
}
