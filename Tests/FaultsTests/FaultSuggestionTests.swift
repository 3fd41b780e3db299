import Testing
@testable import Faults

/// "Did you mean" skips candidates whose length alone puts them out of reach: the answers
/// must be those of comparing every candidate, and a long unknown word (which once cost
/// length x length steps per candidate, 2 ms per rule for the fuzzer) gets none.
@Suite struct FaultSuggestionTests {
    /// Every candidate compared, as before the length filter.
    static func everyCandidate(_ word: String, _ candidates: [String]) -> String? {
        let best = candidates.map { ($0, FaultSuggestion.distance(Array($0), Array(word))) }.min { $0.1 < $1.1 }
        guard let best, best.1 <= max(2, word.count / 3), best.1 < word.count else { return nil }
        return best.0
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
