import Capture
import Vocabulary

/// Command-line overrides of a spec's numbers (`--tolerance 0.5 --cap 60`), applied after
/// loading so a built-in spec can be tuned without copying its file.
public struct SpecOverrides: Sendable {
    public var tolerance: Micros?
    public var immediateTolerance: Micros?
    public var base: Micros?
    public var cap: Micros?
    public var activityTimeout: Micros?
    public var pongTimeout: Micros?
    public var resubscribeWindow: Micros?

    public init() {}

    public func apply(to spec: LifecycleSpec) -> LifecycleSpec {
        var spec = spec
        if let tolerance { spec.tolerances.timing = tolerance }
        if let immediateTolerance { spec.tolerances.immediate = immediateTolerance }
        if !spec.backoff.phases.isEmpty {
            if let base { spec.backoff.phases[0].base = base }
            if let cap { spec.backoff.phases[0].cap = cap }
        }
        if let activityTimeout { spec.stale?.activityTimeout = activityTimeout }
        if let pongTimeout { spec.stale?.pongTimeout = pongTimeout }
        if let resubscribeWindow { spec.channels.resubscribeWindow = resubscribeWindow }
        return spec
    }
}
