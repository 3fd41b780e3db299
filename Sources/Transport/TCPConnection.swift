import CUV
import Glibc

/// How the read direction of a TCP stream ended.
public enum StreamEnd: Sendable, Hashable {
    /// The peer sent FIN (EOF): it will send nothing more, but may still read what we write.
    case fin
    /// The peer reset the connection (RST: ECONNRESET, or EPIPE on a write).
    case reset
    /// Another socket error, with its reason ("timed out", ...).
    case error(String)
}

/// One TCP connection, accepted by a `TCPListener` or opened by `TCPConnector`.
///
/// All callbacks arrive on the loop thread; call every method there too. Reading starts by
/// itself right after the accept/connect callback that handed out the connection returns
/// (set `onRead`/`onEnd` there), unless that callback called `pauseReading()`.
///
/// Lifetime: an open connection keeps itself alive (libuv holds it) until `close()`,
/// `reset()`, a hard end (`.reset`/`.error`, after which it closes itself) or
/// `EventLoop.close()`. After `.fin` it stays open so the other direction can finish: call
/// `close()` when done. Callbacks are dropped on close, which breaks the usual cycle of a
/// callback capturing its own connection.
///
/// ## Backpressure
/// Writes never block and are never refused: whatever the socket cannot take now is queued
/// (`writeQueueBytes`). The owner keeps the queue bounded. The pattern for a relay from A
/// to B:
/// ```swift
/// a.onRead = { bytes in
///     b.write(bytes)
///     if b.writeQueueBytes > b.highWaterMark { a.pauseReading() }  // B is slow: stop taking from A
/// }
/// b.onDrain = { a.resumeReading() }  // B's queue fell to lowWaterMark: take from A again
/// ```
/// `onDrain` fires once each time the queue falls to `lowWaterMark` or below after having
/// been above it, so with `highWaterMark > lowWaterMark` every pause is followed by a drain.
/// TCP itself then pushes back on A's sender through A's full receive window.
public final class TCPConnection: HandleOwner {
    public let loop: EventLoop
    /// Our end, `"127.0.0.1:port"` or `"[::1]:port"`.
    public let localAddress: String
    /// The peer's end, same format; kept from the moment of connecting, so still known after a reset.
    public let remoteAddress: String

    /// Bytes read from the peer.
    public var onRead: (([UInt8]) -> Void)?
    /// The stream ended: `.fin` at most once, then `.reset`/`.error` at most once if the
    /// connection breaks afterwards (or directly, without a `.fin`).
    public var onEnd: ((StreamEnd) -> Void)?
    /// The write queue fell to `lowWaterMark` or below after having been above it.
    public var onDrain: (() -> Void)?
    /// The socket is closed and its memory freed; the last callback of a connection.
    public var onClose: (() -> Void)?

    /// Queue level at or below which `onDrain` fires. Default 64 KiB.
    public var lowWaterMark = 64 * 1024
    /// Suggested level above which a relay stops reading the other side (see "Backpressure").
    /// Only advisory: nothing here enforces it. Default 1 MiB.
    public var highWaterMark = 1024 * 1024

    private var tcp: UnsafeMutablePointer<uv_tcp_t>?
    private var started = false
    private var readingWanted = true
    private var isReading = false
    private var readEnded = false
    private var hardEnded = false
    private var shutdownRequested = false
    private var closeWhenFlushed = false
    private var drainArmed = false
    private var pendingWrites = 0

    /// Takes over an initialised, connected handle: sets TCP_NODELAY, records the addresses.
    init(loop: EventLoop, tcp: UnsafeMutablePointer<uv_tcp_t>) {
        self.loop = loop
        self.tcp = tcp
        uv_tcp_nodelay(tcp, 1)
        localAddress = SocketAddress.of(tcp, peer: false) ?? "?"
        remoteAddress = SocketAddress.of(tcp, peer: true) ?? "?"
        tcp.pointee.data = Unmanaged.passRetained(self).toOpaque()
    }

    /// Whether the socket is closed (or closing).
    public var isClosed: Bool { tcp == nil }

    /// The socket's file descriptor (nil once closed): how close the process is to its
    /// descriptor limit, since the kernel hands out the lowest free number.
    public var descriptor: Int32? {
        guard let tcp else { return nil }
        var fd: uv_os_fd_t = -1
        guard uv_fileno(CUV_handle(tcp), &fd) == 0 else { return nil }
        return Int32(fd)
    }

    /// The process's soft limit on open descriptors (RLIMIT_NOFILE), nil if unlimited.
    public static var descriptorLimit: Int? {
        var limit = rlimit()
        guard getrlimit(__rlimit_resource_t(RLIMIT_NOFILE.rawValue), &limit) == 0, limit.rlim_cur != rlim_t.max else { return nil }
        return Int(clamping: limit.rlim_cur)
    }

    /// Bytes accepted by `write` and not yet handed to the kernel.
    public var writeQueueBytes: Int {
        guard let tcp else { return 0 }
        return uv_stream_get_write_queue_size(CUV_stream(tcp))
    }

    /// Whether the queue is above `highWaterMark` (the relay should stop feeding it).
    public var isOverHighWater: Bool { writeQueueBytes > highWaterMark }

    // MARK: Reading

    /// Called by the listener or connector once the user's callback has returned.
    func start() {
        started = true
        if readingWanted { startReading() }
    }

    /// Stops reading: no `onRead`/`onEnd(.fin)` until `resumeReading()`. Unread bytes stay in
    /// the kernel, whose full receive window then slows the peer down.
    public func pauseReading() {
        loop.assertOnLoopThread("TCPConnection.pauseReading")
        readingWanted = false
        guard isReading, let tcp else { return }
        uv_read_stop(CUV_stream(tcp))
        isReading = false
    }

    /// Starts reading again after `pauseReading()`. No effect after EOF or close.
    public func resumeReading() {
        loop.assertOnLoopThread("TCPConnection.resumeReading")
        readingWanted = true
        if started { startReading() }
    }

    private func startReading() {
        guard !isReading, !readEnded, let tcp else { return }
        let status = uv_read_start(CUV_stream(tcp), { handle, _, buffer in
            let loop = EventLoop.from(handle!.pointee.loop)
            buffer!.pointee = uv_buf_init(loop.readBuffer.baseAddress!.assumingMemoryBound(to: CChar.self),
                                          UInt32(loop.readBuffer.count))
        }, { stream, nread, buffer in
            TCPConnection.owner(of: CUV_handle(stream))?.didRead(nread, buffer)
        })
        if status == 0 { isReading = true } else { fail(status) }
    }

    private func didRead(_ nread: Int, _ buffer: UnsafePointer<uv_buf_t>?) {
        if nread > 0, let base = buffer?.pointee.base {
            onRead?(Array(UnsafeRawBufferPointer(start: base, count: nread)))
        } else if nread == Int(UV_EOF.rawValue) {
            if let error = pendingSocketError(), error == ECONNRESET || error == EPIPE {
                return fail(UV_ECONNRESET.rawValue)
            }
            readEnded = true
            isReading = false  // libuv stops reading on EOF by itself
            onEnd?(.fin)
        } else if nread < 0 {
            fail(Int32(nread))
        }
    }

    /// The socket's pending error (SO_ERROR, cleared by reading it), if any. libuv reports
    /// EOF without reading again when the kernel flags a hang-up after a read that did not
    /// fill its buffer, which is what an RST right behind the peer's last bytes looks like
    /// (a server that answers a close frame and resets): the reset is then only in SO_ERROR,
    /// and without this check it was passed on, and recorded, as a FIN.
    private func pendingSocketError() -> Int32? {
        guard let fd = descriptor else { return nil }
        var error: Int32 = 0
        var length = socklen_t(MemoryLayout<Int32>.size)
        guard getsockopt(fd, SOL_SOCKET, SO_ERROR, &error, &length) == 0, error != 0 else { return nil }
        return error
    }

    /// A hard end: report it once, then close.
    private func fail(_ status: Int32) {
        guard !hardEnded, tcp != nil else { return }
        hardEnded = true
        let end: StreamEnd = (status == UV_ECONNRESET.rawValue || status == UV_EPIPE.rawValue)
            ? .reset : .error(UV.describe(status))
        onEnd?(end)
        close()
    }

    // MARK: Writing

    /// Queues `bytes` for the peer. `completion` (loop thread, never before `write` returns)
    /// gets nil once the kernel took them all, or the error that stopped them ("cancelled"
    /// when the connection closed first).
    public func write(_ bytes: [UInt8], completion: ((TransportError?) -> Void)? = nil) {
        bytes.withUnsafeBytes { write(raw: $0, completion: completion) }
    }

    /// `write` for bytes not in an array; they are copied if they cannot be sent at once.
    public func write(raw bytes: UnsafeRawBufferPointer, completion: ((TransportError?) -> Void)? = nil) {
        loop.assertOnLoopThread("TCPConnection.write")
        guard let tcp, !shutdownRequested, !closeWhenFlushed else {
            let reason = tcp == nil ? "connection closed"
                : closeWhenFlushed ? "connection closing" : "already shut down for writing"
            report(completion, TransportError("write to \(remoteAddress): \(reason)"))
            return
        }
        guard !bytes.isEmpty else { report(completion, nil); return }
        let stream = CUV_stream(tcp)
        var offset = 0
        // Fast path: nothing queued, so try the socket directly and copy only what is left.
        if completion == nil && pendingWrites == 0 {
            var buf = uv_buf_init(UnsafeMutablePointer(mutating: bytes.baseAddress!.assumingMemoryBound(to: CChar.self)),
                                  UInt32(bytes.count))
            let written = uv_try_write(stream, &buf, 1)
            if written == Int32(bytes.count) { return }
            if written > 0 {
                offset = Int(written)
            } else if written != UV_EAGAIN.rawValue {
                fail(written)
                return
            }
        }
        let rest = UnsafeRawBufferPointer(rebasing: bytes[offset...])
        let copy = UnsafeMutableRawBufferPointer.allocate(byteCount: rest.count, alignment: 1)
        copy.copyMemory(from: rest)
        let pending = PendingWrite(buffer: copy, completion: completion)
        let request = UnsafeMutablePointer<uv_write_t>.allocate(capacity: 1)
        request.pointee.data = Unmanaged.passRetained(pending).toOpaque()
        var buf = uv_buf_init(copy.baseAddress!.assumingMemoryBound(to: CChar.self), UInt32(copy.count))
        let status = uv_write(request, stream, &buf, 1) { request, status in
            guard let request else { return }
            let pending = Unmanaged<PendingWrite>.fromOpaque(request.pointee.data).takeRetainedValue()
            let stream = request.pointee.handle
            request.deallocate()
            pending.buffer.deallocate()
            if let me = TCPConnection.owner(of: CUV_handle(stream)) {
                me.didWrite(status, pending.completion)
            } else {
                pending.completion?(status == 0 ? nil : TransportError.uv("write", status))
            }
        }
        if status != 0 {
            Unmanaged<PendingWrite>.fromOpaque(request.pointee.data).release()
            request.deallocate()
            copy.deallocate()
            report(completion, TransportError.uv("write to \(remoteAddress)", status))
            fail(status)
            return
        }
        pendingWrites += 1
        if writeQueueBytes > lowWaterMark { drainArmed = true }
    }

    private func didWrite(_ status: Int32, _ completion: ((TransportError?) -> Void)?) {
        pendingWrites -= 1
        if status < 0 {
            completion?(TransportError.uv("write to \(remoteAddress)", status))
            if status != UV_ECANCELED.rawValue { fail(status) }
            return
        }
        completion?(nil)
        if drainArmed && writeQueueBytes <= lowWaterMark {
            drainArmed = false
            onDrain?()
        }
        if closeWhenFlushed && pendingWrites == 0 { close() }
    }

    /// Calls a completion on a later loop iteration, keeping "never before `write` returns".
    private func report(_ completion: ((TransportError?) -> Void)?, _ error: TransportError?) {
        guard let completion else { return }
        loop.schedule(after: 0) { completion(error) }
    }

    // MARK: Ending

    /// Half-close: sends FIN after the queued writes, keeps reading. Later writes fail.
    public func shutdown(completion: ((TransportError?) -> Void)? = nil) {
        guard let tcp, !shutdownRequested else { return }
        shutdownRequested = true
        let request = UnsafeMutablePointer<uv_shutdown_t>.allocate(capacity: 1)
        request.pointee.data = Unmanaged.passRetained(ShutdownBox(completion)).toOpaque()
        let status = uv_shutdown(request, CUV_stream(tcp)) { request, status in
            guard let request else { return }
            let box = Unmanaged<ShutdownBox>.fromOpaque(request.pointee.data).takeRetainedValue()
            request.deallocate()
            box.completion?(status == 0 ? nil : TransportError.uv("shutdown", status))
        }
        if status != 0 {
            Unmanaged<ShutdownBox>.fromOpaque(request.pointee.data).release()
            request.deallocate()
            report(completion, TransportError.uv("shutdown \(remoteAddress)", status))
        }
    }

    /// Aborts the connection with RST (SO_LINGER 0, then close). Queued writes are dropped.
    public func reset() {
        loop.assertOnLoopThread("TCPConnection.reset")
        guard let tcp else { return }
        self.tcp = nil
        if uv_tcp_close_reset(tcp, TCPConnection.closed) != 0 {
            // libuv refuses after shutdown(); set the linger option by hand and close.
            var fd = uv_os_fd_t()
            if uv_fileno(CUV_handle(tcp), &fd) == 0 {
                var linger = Glibc.linger(l_onoff: 1, l_linger: 0)
                setsockopt(fd, SOL_SOCKET, SO_LINGER, &linger, socklen_t(MemoryLayout<Glibc.linger>.size))
            }
            uv_close(CUV_handle(tcp), TCPConnection.closed)
        }
    }

    /// Closes now; queued writes are cancelled (their completions get "cancelled").
    /// The kernel still sends what it already holds, then FIN. Idempotent.
    public func close() {
        loop.assertOnLoopThread("TCPConnection.close")
        guard let tcp else { return }
        self.tcp = nil
        uv_close(CUV_handle(tcp), TCPConnection.closed)
    }

    /// Closes once every queued write has reached the kernel; later writes are refused
    /// ("connection closing"). If the peer never reads this
    /// never happens: bound it with a timer that calls `close()` or `reset()`.
    public func closeAfterFlush() {
        guard tcp != nil else { return }
        if pendingWrites == 0 { close() } else { closeWhenFlushed = true }
    }

    func closeForLoopShutdown() { close() }

    private static let closed: uv_close_cb = { handle in
        let me = TCPConnection.release(from: handle)
        UV.freeOnClose(handle)
        me?.didClose()
    }

    private func didClose() {
        dropCallbacksAndReportClose()
    }
}

/// One queued write: the copied bytes (freed when libuv is done) and the user's completion.
private final class PendingWrite {
    let buffer: UnsafeMutableRawBufferPointer
    let completion: ((TransportError?) -> Void)?
    init(buffer: UnsafeMutableRawBufferPointer, completion: ((TransportError?) -> Void)?) {
        self.buffer = buffer
        self.completion = completion
    }
}

private final class ShutdownBox {
    let completion: ((TransportError?) -> Void)?
    init(_ completion: ((TransportError?) -> Void)?) { self.completion = completion }
}
