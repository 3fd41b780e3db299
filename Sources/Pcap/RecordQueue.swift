import Capture

/// Records decoded from packets, waiting for `PcapRecordSource.next()`. A class so every
/// connection appends to the same queue without copying it.
///
/// A growable ring of initialized slots: `append` moves a record in and `popFirst` moves it
/// out, so a record is never copied (a frame record holds several references, each copy a
/// retain and a release) and a drained queue has nothing left to destroy. An `Array` of
/// optionals did both, and its `removeAll` ran the generic destroy over every slot.
final class RecordQueue {
    @exclusivity(unchecked) private var slots: UnsafeMutablePointer<CaptureRecord>
    @exclusivity(unchecked) private var capacity: Int
    @exclusivity(unchecked) private var head = 0
    @exclusivity(unchecked) private(set) var count = 0

    init(capacity: Int = 64) {
        self.capacity = capacity
        slots = .allocate(capacity: capacity)
    }

    deinit {
        while count > 0 { _ = popFirst() }
        slots.deallocate()
    }

    var isEmpty: Bool { count == 0 }

    func append(_ record: consuming CaptureRecord) {
        if count == capacity { grow() }
        (slots + (head + count) % capacity).initialize(to: record)
        count += 1
    }

    func popFirst() -> CaptureRecord? {
        guard count > 0 else { return nil }
        let record = (slots + head).move()
        count -= 1
        head = count == 0 ? 0 : (head + 1) % capacity
        return record
    }

    /// Doubles the ring, moving the records to the start of the new one in order.
    private func grow() {
        let larger = UnsafeMutablePointer<CaptureRecord>.allocate(capacity: capacity * 2)
        let first = min(count, capacity - head)
        larger.moveInitialize(from: slots + head, count: first)
        (larger + first).moveInitialize(from: slots, count: count - first)
        slots.deallocate()
        slots = larger
        capacity *= 2
        head = 0
    }
}
