import Capture
import Lifecycle
import Testing
@testable import Analysis
import Vocabulary

/// The hand-off batch of the sharded analysis: steps come out in the order they went in,
/// moved whole (a record's payload intact), and an emptied batch takes a new round.
@Suite struct StepBatchTests {
    static func step(_ number: Int) -> NumberedStep {
        let open = OpenRecord(conn: number, t: Micros(number), client: "10.0.0.\(number % 250):\(40_000 + number)", server: "s")
        return NumberedStep(number: number, step: SpecStep(one: .open(client: number % 7, open)))
    }

    @Test func stepsComeOutInOrderRoundAfterRound() throws {
        let batch = StepBatch(capacity: 5)
        for round in 0..<3 {
            #expect(batch.isEmpty)
            for i in 0..<5 { batch.append(Self.step(round * 10 + i)) }
            #expect(batch.isFull)
            var numbers: [Int] = []
            while let numbered = batch.takeNext() {
                guard case .open(let client, let open) = numbered.step.step else {
                    Issue.record("step \(numbered.number) changed kind")
                    continue
                }
                #expect(client == numbered.number % 7 && open.conn == numbered.number)
                #expect(open.client == "10.0.0.\(numbered.number % 250):\(40_000 + numbered.number)")
                numbers.append(numbered.number)
            }
            #expect(numbers == (0..<5).map { round * 10 + $0 })
            #expect(batch.isEmpty && !batch.isFull)
        }
    }

    /// A batch let go half taken (an analysis abandoned on an input error) destroys the
    /// steps still in it, and only those.
    @Test func aBatchLetGoHalfTakenEndsCleanly() {
        var batch: StepBatch? = StepBatch(capacity: 4)
        for i in 0..<3 { batch?.append(Self.step(i)) }
        #expect(batch?.takeNext()?.number == 0)
        #expect(batch?.isEmpty == false)
        // Deinitializing the taken slot again would release its record twice and trap.
        batch = nil
    }
}
