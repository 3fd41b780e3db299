/// SplitMix64: small, fast, and the same sequence on every platform for a given seed. Every
/// random draw in Faultline comes from one of these, owned by the caller (mask keys, fault
/// `prob=` and latency jitter, the simulator's backoff, replays, synthetic captures), so
/// tests, fault plans and replays repeat exactly run after run.
public struct SeededGenerator: RandomNumberGenerator, Sendable, Hashable {
    public private(set) var state: UInt64

    public init(seed: UInt64) { state = seed }

    /// A generator for one purpose derived from a seed and labels (rule id, connection), so
    /// draws for one connection do not depend on how many other connections came first.
    public init(seed: UInt64, _ labels: UInt64...) {
        var mixed = seed
        for label in labels {
            var g = SeededGenerator(seed: mixed ^ (label &* 0x9E37_79B9_7F4A_7C15))
            mixed = g.next()
        }
        state = mixed
    }

    public mutating func next() -> UInt64 {
        state &+= 0x9E37_79B9_7F4A_7C15
        var z = state
        z = (z ^ (z >> 30)) &* 0xBF58_476D_1CE4_E5B9
        z = (z ^ (z >> 27)) &* 0x94D0_49BB_1331_11EB
        return z ^ (z >> 31)
    }

    /// A uniform draw in 0..<1.
    public mutating func unit() -> Double { Double(next() >> 11) / Double(1 << 53) }
}
