import CUV
import Glibc

/// A watcher for one POSIX signal (SIGINT, SIGTERM...) delivered as a callback on the loop
/// thread, where it is safe to flush files and close connections (a raw signal handler is
/// not). Active until `cancel()` or `EventLoop.close()`. Creating a watcher unblocks the
/// signal for the loop thread, in case the process inherited it blocked.
public final class SignalHandle: HandleOwner {
    private var handle: UnsafeMutablePointer<uv_signal_t>?
    private var body: ((Int32) -> Void)?
    public let signal: Int32

    init(loop: EventLoop, signal: Int32, body: @escaping (Int32) -> Void) throws {
        loop.assertOnLoopThread("EventLoop.onSignal")
        self.signal = signal
        // A process may start with the signal blocked (a parent's mask is inherited: Swift
        // Testing's children get SIGINT/SIGTERM blocked), and a blocked signal never reaches
        // libuv's handler. Watching a signal means wanting it: unblock it on this thread.
        var set = sigset_t()
        sigemptyset(&set)
        sigaddset(&set, signal)
        pthread_sigmask(SIG_UNBLOCK, &set, nil)
        self.body = body
        let handle = UnsafeMutablePointer<uv_signal_t>.allocate(capacity: 1)
        uv_signal_init(loop.uvLoop, handle)
        handle.pointee.data = Unmanaged.passRetained(self).toOpaque()
        self.handle = handle
        let status = uv_signal_start(handle, { handle, signum in
            SignalHandle.owner(of: CUV_handle(handle))?.body?(signum)
        }, signal)
        if status != 0 {
            cancel()
            throw TransportError.uv("watch signal \(signal)", status)
        }
    }

    /// Stops watching; the signal's previous disposition returns once no watcher is left.
    public func cancel() {
        guard let handle else { return }
        self.handle = nil
        body = nil
        uv_close(CUV_handle(handle)) { handle in
            _ = SignalHandle.release(from: handle)
            UV.freeOnClose(handle)
        }
    }

    func closeForLoopShutdown() { cancel() }
}

extension EventLoop {
    /// Calls `body` on the loop thread each time `signal` arrives (e.g. `SIGINT`, `SIGTERM`).
    @discardableResult
    public func onSignal(_ signal: Int32, _ body: @escaping (Int32) -> Void) throws -> SignalHandle {
        try SignalHandle(loop: self, signal: signal, body: body)
    }
}
