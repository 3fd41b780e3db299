import CUV
import Synchronization

/// The one part of an `EventLoop` that other threads may use: queue work for the loop
/// thread and stop the loop.
///
/// `@unchecked Sendable` because it holds a pointer to a `uv_async_t`, which Swift cannot
/// check; it is sound because the only libuv call made from other threads is
/// `uv_async_send` (thread-safe by libuv's contract), always under `state`'s lock and only
/// while the loop is open (`detach()` sets `closed` under the same lock before the handle is
/// closed), and the queue itself is guarded by the `Mutex`.
public final class LoopRemote: @unchecked Sendable {
    private struct State {
        var jobs: [@Sendable (EventLoop) -> Void] = []
        var stopRequested = false
        var closed = false
    }

    private let state = Mutex(State())
    private let async: UnsafeMutablePointer<uv_async_t>
    /// Set once by `EventLoop.init`; read only on the loop thread (in the async callback).
    private weak var loop: EventLoop?

    init(loop uvLoop: UnsafeMutablePointer<uv_loop_t>) throws {
        async = .allocate(capacity: 1)
        let status = uv_async_init(uvLoop, async) { handle in
            guard let remote = AsyncOwner.owner(of: CUV_handle(handle))?.remote else { return }
            remote.drain()
        }
        guard status == 0 else {
            async.deallocate()
            throw TransportError.uv("create loop wake-up", status)
        }
        // The handle's owner is a small object that points back weakly-free at the remote:
        // the remote is owned by the EventLoop, the async handle by libuv until closed.
        async.pointee.data = Unmanaged.passRetained(AsyncOwner(remote: self)).toOpaque()
    }

    func attach(_ loop: EventLoop) { self.loop = loop }

    /// Queues `body` to run on the loop thread; wakes the loop. From any thread. Dropped
    /// silently once the loop is closed.
    public func execute(_ body: @escaping @Sendable (EventLoop) -> Void) {
        state.withLock { state in
            guard !state.closed else { return }
            state.jobs.append(body)
            uv_async_send(async)
        }
    }

    /// Makes the loop's `run()` return. From any thread.
    public func stop() {
        state.withLock { state in
            guard !state.closed else { return }
            state.stopRequested = true
            uv_async_send(async)
        }
    }

    /// Loop thread: runs the queued jobs in order, then honours a stop request.
    private func drain() {
        let (jobs, stop) = state.withLock { state in
            let taken = (state.jobs, state.stopRequested)
            state.jobs.removeAll()
            state.stopRequested = false
            return taken
        }
        guard let loop else { return }
        for job in jobs { job(loop) }
        if stop { loop.stop() }
    }

    /// Loop thread, from `EventLoop.close()`: refuse further sends, then close the handle.
    func detach() {
        state.withLock { $0.closed = true }
        uv_close(CUV_handle(async)) { handle in
            _ = AsyncOwner.release(from: handle)
            UV.freeOnClose(handle)
        }
    }
}

/// `data` of the async handle. Not a `HandleOwner`: the loop's own wake-up is closed by
/// `detach()`, not by the generic walk.
private final class AsyncOwner {
    unowned let remote: LoopRemote
    init(remote: LoopRemote) { self.remote = remote }

    static func owner(of handle: UnsafeMutablePointer<uv_handle_t>?) -> AsyncOwner? {
        guard let data = handle?.pointee.data else { return nil }
        return Unmanaged<AsyncOwner>.fromOpaque(data).takeUnretainedValue()
    }

    static func release(from handle: UnsafeMutablePointer<uv_handle_t>?) -> AsyncOwner? {
        guard let handle, let data = handle.pointee.data else { return nil }
        handle.pointee.data = nil
        return Unmanaged<AsyncOwner>.fromOpaque(data).takeRetainedValue()
    }
}
