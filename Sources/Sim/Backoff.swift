/// Full-jitter exponential backoff (the AWS architecture blog's "full jitter"): attempt n
/// waits a delay drawn uniformly from [0, min(cap, base * 2^(n-1))].
public struct Backoff: Sendable, Hashable {
    public var base: SimMicros
    public var cap: SimMicros

    public init(base: SimMicros = SimDuration.second, cap: SimMicros = 30 * SimDuration.second) {
        self.base = base
        self.cap = cap
    }

    /// min(cap, base * 2^(n-1)) for attempt n >= 1, without overflow for any n.
    public func bound(attempt n: Int) -> SimMicros {
        let shift = max(0, n - 1)
        guard shift < 62, base <= (SimMicros.max >> shift) else { return cap }
        return min(cap, base << shift)
    }

    /// A delay for attempt n, uniform on [0, bound] in whole microseconds.
    public func delay<G: RandomNumberGenerator>(attempt n: Int, using generator: inout G) -> SimMicros {
        SimMicros.random(in: 0...bound(attempt: n), using: &generator)
    }
}
