import Glibc
import Synchronization

/// A value that belongs to one loop's thread, carried through `@Sendable` closures (into
/// `LoopRemote.execute`, a `Thread`, a `Task`) and opened only back on that loop's thread.
///
/// ```swift
/// let sessions = LoopBound(SessionTable(), on: loop)   // loop-thread state
/// remote.execute { _ in sessions.value.stopAll() }      // from any thread
/// ```
///
/// `@unchecked Sendable`: the value itself is not thread-safe; soundness comes from `value`
/// refusing (precondition) any thread but the loop's, so it is only ever touched there.
public final class LoopBound<Value>: @unchecked Sendable {
    private var stored: Value
    private let thread: LoopThread

    public init(_ value: Value, on loop: EventLoop) {
        stored = value
        thread = loop.thread
    }

    /// The value; only on the loop's thread (traps elsewhere).
    public var value: Value {
        get {
            precondition(thread.isCurrent, "LoopBound.value used off its loop's thread")
            return stored
        }
        set {
            precondition(thread.isCurrent, "LoopBound.value used off its loop's thread")
            stored = newValue
        }
    }
}

/// Which thread a loop belongs to: the one that created it until `run()` is called, then
/// the one running it. Atomic so other threads can ask without a race.
final class LoopThread: Sendable {
    private let id = Atomic<UInt>(UInt(pthread_self()))

    /// Called by `EventLoop.run()`.
    func claim() { id.store(UInt(pthread_self()), ordering: .releasing) }

    var isCurrent: Bool { pthread_equal(pthread_t(id.load(ordering: .acquiring)), pthread_self()) != 0 }
}
