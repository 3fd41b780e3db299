import Sim
import Vocabulary
import WebSocket
import Testing

@Suite struct BackoffTests {
    let backoff = Backoff()

    @Test func boundDoublesFromBaseUpToCap() {
        let bounds = (1...8).map { backoff.bound(attempt: $0) }
        #expect(bounds == [1, 2, 4, 8, 16, 30, 30, 30].map { $0 * SimDuration.second })
        #expect(backoff.bound(attempt: 10_000) == 30 * SimDuration.second)
        #expect(Backoff(base: 3, cap: .max).bound(attempt: 200) == .max)
    }

    @Test(arguments: 1...7)
    func fullJitterStaysInBoundsAndCoversThem(attempt: Int) {
        var random = SeededGenerator(seed: UInt64(attempt) * 1_000_003)
        let bound = backoff.bound(attempt: attempt)
        let draws = (0..<4_000).map { _ in backoff.delay(attempt: attempt, using: &random) }
        #expect(draws.allSatisfy { $0 >= 0 && $0 <= bound })
        // Full jitter: uniform over the whole range, not clustered near the bound.
        #expect(draws.min()! < bound / 20)
        #expect(draws.max()! > bound - bound / 20)
        let mean = Double(draws.reduce(0, +)) / Double(draws.count)
        #expect(abs(mean / Double(bound) - 0.5) < 0.03)
        // Each quarter of the range gets about a quarter of the draws.
        for quarter in 0..<4 {
            let low = bound / 4 * SimMicros(quarter), high = bound / 4 * SimMicros(quarter + 1)
            let share = Double(draws.filter { $0 >= low && $0 < high }.count) / Double(draws.count)
            #expect(abs(share - 0.25) < 0.04, "quarter \(quarter): \(share)")
        }
    }

    @Test func sameSeedSameDelays() {
        var a = SeededGenerator(seed: 42), b = SeededGenerator(seed: 42), c = SeededGenerator(seed: 43)
        let first = (1...20).map { backoff.delay(attempt: $0, using: &a) }
        #expect(first == (1...20).map { backoff.delay(attempt: $0, using: &b) })
        #expect(first != (1...20).map { backoff.delay(attempt: $0, using: &c) })
    }

    @Test func durationsParseAndFormat() {
        #expect(SimDuration.parse("250ms") == 250_000)
        #expect(SimDuration.parse("1.5s") == 1_500_000)
        #expect(SimDuration.parse("2") == 2_000_000)
        #expect(SimDuration.parse("3m") == 180_000_000)
        #expect(SimDuration.parse("100us") == 100)
        #expect(SimDuration.parse("fast") == nil)
        #expect(SimDuration.parse("-1s") == nil)
        #expect(SimDuration.format(734_400) == "0.734 s")
        #expect(SimDuration.format(30_000_000) == "30.000 s")
    }
}
