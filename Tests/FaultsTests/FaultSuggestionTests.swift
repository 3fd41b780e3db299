import Testing
@testable import Faults

/// "Did you mean" computes only the band of the edit distance within its limit and stops
/// on a row beyond it: the answers must be those of the full distance over every
/// candidate, and a long unknown word (which once cost length x length steps per
/// candidate, 2 ms per rule for the fuzzer) gets none.
@Suite struct FaultSuggestionTests {
    /// The full edit distance, every cell.
    static func fullDistance(_ a: [Character], _ b: [Character]) -> Int {
        var previous = Array(0...b.count)
        for i in a.indices {
            var current = [i + 1] + Array(repeating: 0, count: b.count)
            for j in b.indices {
                current[j + 1] = min(previous[j + 1] + 1, current[j] + 1, previous[j] + (a[i] == b[j] ? 0 : 1))
            }
            previous = current
        }
        return previous[b.count]
    }

    /// Every candidate compared in full.
    static func everyCandidate(_ word: String, _ candidates: [String]) -> String? {
        let best = candidates.map { ($0, fullDistance(Array($0), Array(word))) }.min { $0.1 < $1.1 }
        guard let best, best.1 <= max(2, word.count / 3), best.1 < word.count else { return nil }
        return best.0
    }

    @Test func theBandedDistanceIsTheFullOneWithinItsLimit() {
        let words = ["", "a", "ab", "ba", "kitten", "sitting", "stall-pongs", "stal-pongs", "close", "latency", "xyzzy",
                     "abcdefghij", "jihgfedcba", "after=", "afte="]
        for a in words {
            for b in words {
                let full = Self.fullDistance(Array(a), Array(b))
                for limit in 0...6 {
                    let banded = FaultSuggestion.distance(Array(a), Array(b), within: limit)
                    #expect(banded == (full <= limit ? full : nil), "\(a) / \(b) within \(limit)")
                }
            }
        }
    }

    @Test func answersAsComparingEveryCandidate() {
        let kinds = FaultRegistry.names + ["after=", "dir=", "conn=", "for=", "every=", "x"]
        let words = ["stal-pongs", "stall-pong", "stall-pongss", "clos", "cl", "c", "", "latncy", "afte=", "dr=",
                     "drop-everything-now", "stall-pongs-and-more", "xx", "resett", "nothing-like-it"]
        for word in words {
            #expect(FaultSuggestion.closest(word, kinds) == Self.everyCandidate(word, kinds), "\(word)")
        }
        #expect(FaultSuggestion.closest("stal-pongs", kinds) == "stall-pongs")
    }

    @Test func aLongUnknownWordGetsNoSuggestion() {
        let word = String(repeating: "stall-pongs", count: 2_000)
        #expect(FaultSuggestion.closest(word, FaultRegistry.names) == nil)
        #expect(throws: FaultRuleError.self) { try FaultRule.parse(word) }
    }
}
