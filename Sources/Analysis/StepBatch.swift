/// A batch of numbered steps on their way from the routing thread to one shard worker,
/// in one allocation made once and reused: the router moves each step into a slot, the
/// worker moves each out in order and hands the emptied batch back (`ShardWorker.recycle`).
/// An `Array` per batch cost the hand-off a malloc and free on two threads per batch, and
/// emptying it in order (`reverse` then `popLast`) copied every step, counting every
/// reference in its record up and down once more.
///
/// Touched by one thread at a time: the router until it is queued, then the worker until
/// it is handed back (the queue's lock orders the two).
final class StepBatch: @unchecked Sendable {
    let capacity: Int
    private let slots: UnsafeMutablePointer<NumberedStep>
    /// Slots `taken..<count` hold steps; those before `taken` were moved out.
    private var count = 0
    private var taken = 0

    init(capacity: Int) {
        self.capacity = max(1, capacity)
        slots = .allocate(capacity: self.capacity)
    }

    deinit {
        (slots + taken).deinitialize(count: count - taken)
        slots.deallocate()
    }

    var isEmpty: Bool { count == taken }
    var isFull: Bool { count == capacity }

    /// Moves a step into the next slot; the batch must not be full.
    func append(_ step: consuming NumberedStep) {
        precondition(count < capacity, "a full StepBatch was appended to")
        (slots + count).initialize(to: step)
        count += 1
    }

    /// The next step in the order appended, moved out; nil once all were taken (the batch
    /// is then empty and ready to be filled again).
    func takeNext() -> NumberedStep? {
        guard taken < count else {
            count = 0
            taken = 0
            return nil
        }
        taken += 1
        return (slots + taken - 1).move()
    }
}
