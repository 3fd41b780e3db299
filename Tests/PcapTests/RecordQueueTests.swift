import Capture
import Testing
@testable import Pcap
import Vocabulary

@Suite struct RecordQueueTests {
    static func note(_ n: Int) -> CaptureRecord {
        .note(NoteRecord(conn: ConnectionID(n), t: Micros(n), level: .info, message: "record \(n)"))
    }

    static func number(_ record: CaptureRecord?) -> Int? {
        guard case .note(let note)? = record else { return nil }
        return note.conn.map { Int($0) }
    }

    /// First in, first out, across growth and across the ring's wrap-around.
    @Test func keepsOrderWhileGrowingAndWrapping() {
        let queue = RecordQueue(capacity: 4)
        var next = 0, expected = 0
        // Uneven bursts: the head moves around the ring and the ring grows mid-wrap.
        for burst in [3, 2, 5, 1, 9, 4, 17, 2] {
            for _ in 0..<burst { queue.append(Self.note(next)); next += 1 }
            for _ in 0..<(burst / 2 + 1) {
                guard let record = queue.popFirst() else { break }
                #expect(Self.number(record) == expected)
                expected += 1
            }
        }
        while let record = queue.popFirst() {
            #expect(Self.number(record) == expected)
            expected += 1
        }
        #expect(expected == next)
        #expect(queue.isEmpty && queue.popFirst() == nil)
    }

    /// Records still queued when the queue goes away are destroyed with it, wrapped around
    /// the ring's end (a wrong slot count here is a double free or a read of a moved-out
    /// slot, which crashes the test process).
    @Test func recordsLeftInTheQueueAreReleased() {
        var queue: RecordQueue? = RecordQueue(capacity: 4)
        for n in 0..<3 { queue?.append(Self.note(n)) }
        #expect(Self.number(queue?.popFirst()) == 0)
        #expect(Self.number(queue?.popFirst()) == 1)
        for n in 3..<6 { queue?.append(Self.note(n)) }  // slots 3, 0, 1: wrapped
        #expect(queue?.count == 4)
        queue = nil
    }
}
