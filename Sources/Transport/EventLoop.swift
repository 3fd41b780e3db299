import CUV
import Glibc

/// One libuv loop and the thread that runs it.
///
/// Everything in this module is driven by an `EventLoop`: listeners, connections, timers and
/// signal watchers are created on it and must only be touched from the thread that calls
/// `run()` (all their callbacks arrive there). The only exception is `remote`, a `Sendable`
/// handle for waking the loop from other threads. Nothing is global, so a program may run
/// one loop per thread (per core) side by side.
///
/// Typical use:
/// ```swift
/// let loop = try EventLoop()
/// let listener = try TCPListener(loop: loop, host: "127.0.0.1", port: 0) { conn in ... }
/// loop.onSignal(SIGINT) { loop.stop() }
/// loop.run()      // returns after stop()
/// loop.close()    // closes every handle still open and frees the loop
/// ```
public final class EventLoop {
    /// The libuv loop; fixed address, freed by `close()`.
    let uvLoop: UnsafeMutablePointer<uv_loop_t>
    /// One read buffer shared by every connection of this loop: libuv asks for a buffer and
    /// hands it back filled in the same call stack, and the bytes are copied out before the
    /// next read, so one buffer per loop (not per connection) keeps idle connections cheap.
    let readBuffer: UnsafeMutableRawBufferPointer
    /// Cross-thread wake-ups (`execute`, remote `stop`).
    public let remote: LoopRemote
    private let monotonicStart: UInt64
    /// Wall-clock time at loop creation, microseconds since the Unix epoch. Pairs with `now`:
    /// `wallClockStart + now` is the current wall-clock time, without its jumps.
    public let wallClockStart: Int64
    private(set) var isClosed = false
    /// The loop's thread, for `LoopBound` and `isOnLoopThread`.
    let thread = LoopThread()

    /// Creates the loop. Also ignores SIGPIPE for the process: libuv writes with `write(2)`,
    /// so a peer that went away would otherwise kill the program instead of failing a write.
    public init(readBufferSize: Int = 64 * 1024) throws {
        signal(SIGPIPE, SIG_IGN)
        let loop = UnsafeMutablePointer<uv_loop_t>.allocate(capacity: 1)
        let status = uv_loop_init(loop)
        guard status == 0 else {
            loop.deallocate()
            throw TransportError.uv("create event loop", status)
        }
        uvLoop = loop
        readBuffer = .allocate(byteCount: readBufferSize, alignment: 16)
        monotonicStart = uv_hrtime()
        var ts = timespec()
        clock_gettime(CLOCK_REALTIME, &ts)
        wallClockStart = Int64(ts.tv_sec) * 1_000_000 + Int64(ts.tv_nsec) / 1000
        do {
            remote = try LoopRemote(loop: loop)
        } catch {
            uv_loop_close(loop)
            loop.deallocate()
            readBuffer.deallocate()
            throw error
        }
        loop.pointee.data = Unmanaged.passUnretained(self).toOpaque()
        remote.attach(self)
    }

    /// Reads the `EventLoop` back from a libuv loop (its `data` field; unretained: the
    /// `EventLoop` outlives every handle on it).
    static func from(_ loop: UnsafeMutablePointer<uv_loop_t>?) -> EventLoop {
        Unmanaged<EventLoop>.fromOpaque(loop!.pointee.data).takeUnretainedValue()
    }

    /// Monotonic microseconds since the loop was created (uv_hrtime; never jumps).
    public var now: Int64 { Int64((uv_hrtime() - monotonicStart) / 1000) }

    /// Runs the loop on the calling thread until `stop()` (or `remote.stop()`). The loop
    /// keeps running with nothing to do: it always waits for cross-thread wake-ups.
    public func run() {
        precondition(!isClosed, "EventLoop.run() after close()")
        thread.claim()
        uv_run(uvLoop, UV_RUN_DEFAULT)
    }

    /// Whether the caller is on the loop's thread (the creating thread until `run()`).
    public var isOnLoopThread: Bool { thread.isCurrent }

    /// Debug builds trap when a loop object is used off the loop's thread: such a bug would
    /// otherwise corrupt libuv's state silently and far from its cause.
    func assertOnLoopThread(_ what: @autoclosure () -> String, file: StaticString = #fileID, line: UInt = #line) {
        assert(thread.isCurrent, "\(what()) called off the event loop's thread", file: file, line: line)
    }

    /// Runs one iteration without blocking; for tests and embedding.
    @discardableResult
    public func runOnce() -> Bool {
        thread.claim()
        return uv_run(uvLoop, UV_RUN_NOWAIT) != 0
    }

    /// Makes `run()` return after the current iteration. Call on the loop thread
    /// (from another thread, use `remote.stop()`).
    public func stop() {
        assertOnLoopThread("EventLoop.stop()")
        uv_stop(uvLoop)
    }

    /// Runs `body` on the loop thread at the next iteration. Safe from any thread; the
    /// body receives the loop so it can touch the loop's objects there.
    public func execute(_ body: @escaping @Sendable (EventLoop) -> Void) {
        remote.execute(body)
    }

    /// Closes every handle still open on the loop (connections, listeners, timers, signal
    /// watchers; their `onClose` callbacks run), waits for those closes and pending requests
    /// such as DNS look-ups to finish, and frees the loop. Call on the loop thread after
    /// `run()` has returned. Idempotent.
    public func close() {
        guard !isClosed else { return }
        isClosed = true
        remote.detach()
        uv_walk(uvLoop, { handle, _ in
            guard let handle, uv_is_closing(handle) == 0, let data = handle.pointee.data else { return }
            (Unmanaged<AnyObject>.fromOpaque(data).takeUnretainedValue() as? HandleOwner)?.closeForLoopShutdown()
        }, nil)
        // Close callbacks run in the next iteration; pending requests (a DNS look-up on the
        // thread pool) finish on their own and keep the loop alive until they do.
        uv_run(uvLoop, UV_RUN_DEFAULT)
        let status = uv_loop_close(uvLoop)
        if status == 0 {
            uvLoop.deallocate()
            readBuffer.deallocate()
        }
        // On failure (a handle opened from a close callback) the memory stays allocated: a
        // leak is better than freeing a loop libuv still uses.
    }

    deinit {
        if !isClosed { close() }
    }
}
