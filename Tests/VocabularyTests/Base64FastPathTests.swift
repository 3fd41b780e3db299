import Testing
import Vocabulary

/// The table-driven, in-place `Base64.encode` against a plain bit-by-bit reference: every
/// length 0...70 (all padding cases), long inputs, all
/// byte values, and appending after existing bytes. Each output must also decode back.
@Suite struct Base64FastPathTests {
    /// RFC 4648 base64 the obvious way: six bits at a time, padding at the end.
    static func reference(_ bytes: [UInt8]) -> [UInt8] {
        let alphabet = Array("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/".utf8)
        var out: [UInt8] = []
        var i = 0
        while i < bytes.count {
            let group = Array(bytes[i..<min(i + 3, bytes.count)])
            var v = 0
            for k in 0..<3 { v = v << 8 | (k < group.count ? Int(group[k]) : 0) }
            let chars = group.count + 1
            for k in 0..<4 { out.append(k < chars ? alphabet[v >> (18 - 6 * k) & 0x3F] : UInt8(ascii: "=")) }
            i += 3
        }
        return out
    }

    /// SplitMix64, so a failure names a reproducible input.
    struct Generator: RandomNumberGenerator {
        var state: UInt64
        mutating func next() -> UInt64 {
            state &+= 0x9E37_79B9_7F4A_7C15
            var z = state
            z = (z ^ (z >> 30)) &* 0xBF58_476D_1CE4_E5B9
            z = (z ^ (z >> 27)) &* 0x94D0_49BB_1331_11EB
            return z ^ (z >> 31)
        }
    }

    static func check(_ bytes: [UInt8], prefix: [UInt8] = []) {
        var out = prefix
        Base64.encode(bytes, into: &out)
        let expected = prefix + reference(bytes)
        #expect(out == expected, "length \(bytes.count)")
        #expect(out.count == prefix.count + Base64.encodedCount(bytes.count))
        #expect(Base64.decode(String(decoding: out[prefix.count...], as: UTF8.self)) == bytes)
    }

    @Test func everyLengthUpTo70MatchesTheReference() {
        var rng = Generator(state: 1)
        for length in 0...70 {
            for _ in 0..<20 { Self.check((0..<length).map { _ in UInt8.random(in: 0...255, using: &rng) }) }
        }
    }

    @Test func longerInputsMatchTheReference() {
        var rng = Generator(state: 2)
        for base in [3 * 1024, 16 * 1024] {
            for length in (base - 4)...(base + 4) {
                Self.check((0..<length).map { _ in UInt8.random(in: 0...255, using: &rng) })
            }
        }
    }

    @Test func everyByteValueInEveryPosition() {
        for shift in 0..<3 {
            Self.check([UInt8](repeating: 0, count: shift) + (0...255).map { UInt8($0) })
            Self.check([UInt8](repeating: 0xFF, count: shift) + (0...255).reversed().map { UInt8($0) })
        }
    }

    @Test func appendsAfterWhatIsAlreadyThere() {
        var rng = Generator(state: 3)
        for length in [0, 1, 2, 3, 100, 5000] {
            Self.check((0..<length).map { _ in UInt8.random(in: 0...255, using: &rng) }, prefix: Array("{\"b64\":\"".utf8))
        }
    }
}
