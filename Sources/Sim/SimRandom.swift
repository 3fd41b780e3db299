/// SplitMix64: a small, fast, seedable generator. Every random choice a machine makes (socket
/// ids, backoff delays) comes from one of these, owned by the caller, so a run repeats
/// exactly for a given seed.
public struct SimRandom: RandomNumberGenerator, Sendable {
    private var state: UInt64

    public init(seed: UInt64) { state = seed }

    public mutating func next() -> UInt64 {
        state &+= 0x9E37_79B9_7F4A_7C15
        var z = state
        z = (z ^ (z >> 30)) &* 0xBF58_476D_1CE4_E5B9
        z = (z ^ (z >> 27)) &* 0x94D0_49BB_1331_11EB
        return z ^ (z >> 31)
    }

    /// A generator for the `index`th of several clients sharing one seed.
    public static func derived(seed: UInt64, index: Int) -> SimRandom {
        var mixer = SimRandom(seed: seed ^ (UInt64(truncatingIfNeeded: index) &* 0xD134_2543_DE82_EF95))
        return SimRandom(seed: mixer.next())
    }
}
