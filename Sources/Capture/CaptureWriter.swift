import Dispatch
import Glibc
import Synchronization

/// Writes a capture file as it happens: the header at once, then records buffered in
/// memory and written with write(2) when the buffer passes `bufferLimit`, at least every
/// `flushInterval` by a background timer, on `flush()` and on `close()`.
///
/// Crash safety: the buffer only ever holds whole lines, and a write always starts at a
/// line boundary, so a process killed at any moment (SIGKILL included) leaves complete
/// lines followed by at most one torn line, which `CaptureReader` reports as a warning.
/// At most `flushInterval` of records (plus one buffer) can be lost.
///
/// Threading: every method may be called from any thread. Encoding runs outside the lock;
/// the buffer and the file descriptor are guarded by a `Mutex`, so lines never interleave.
/// The flush timer runs on a Dispatch queue of its own and takes the same lock.
public final class CaptureWriter: Sendable {
    /// Flushes when this many bytes are buffered.
    public static let bufferLimit = 256 * 1024
    /// The longest a complete record waits in memory.
    public static let flushInterval: Duration = .milliseconds(50)

    private struct State: ~Copyable {
        var fd: Int32
        var buffer: [UInt8] = []
        var failure: String?
    }

    public let path: String
    private let state: Mutex<State?>
    // nonisolated(unsafe): set once in init, then only `cancel()`ed in close(); Dispatch
    // sources are thread-safe for that.
    nonisolated(unsafe) private let timer: DispatchSourceTimer

    /// Creates (or truncates) `path` and writes `header` as its first line, immediately.
    /// Throws `CaptureError` naming the file when it cannot be created or written.
    public init(path: String, header: CaptureHeader) throws(CaptureError) {
        self.path = path
        let fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0o644)
        guard fd >= 0 else {
            throw CaptureError(file: path, line: 0, offset: 0,
                               message: "cannot create capture file: \(String(cString: strerror(errno)))")
        }
        let headerLine = RecordCoding.encode(.header(header))
        if let failure = Self.writeAll(fd, headerLine) {
            Glibc.close(fd)
            throw CaptureError(file: path, line: 1, offset: 0, message: "cannot write capture header: \(failure)")
        }
        state = Mutex(State(fd: fd))
        appendedBytes = Atomic(Int64(headerLine.count))
        timer = DispatchSource.makeTimerSource(queue: DispatchQueue(label: "faultline.capture-writer.flush"))
        let interval = DispatchTimeInterval.milliseconds(Int(Self.flushInterval.components.attoseconds / 1_000_000_000_000_000))
        timer.schedule(deadline: .now() + interval, repeating: interval, leeway: .milliseconds(10))
        timer.setEventHandler { [weak self] in try? self?.flush() }
        timer.resume()
    }

    deinit {
        timer.cancel()
        try? close()
    }

    /// Bytes of every record appended so far, header included, whether already written
    /// to the file or still buffered. Stays at its last value after `close()`.
    public var bytesWritten: Int64 { appendedBytes.load(ordering: .relaxed) }
    private let appendedBytes: Atomic<Int64>

    /// Buffers one record; writes the buffer out when it is full.
    /// Throws after the file was closed or once a write has failed (disk full, ...).
    public func append(_ record: CaptureRecord) throws(CaptureError) {
        let line = RecordCoding.encode(record)
        try state.withLock { (state: inout State?) throws(CaptureError) in
            guard state != nil else { throw closedError() }
            if let failure = state!.failure { throw writeError(failure) }
            state!.buffer.append(contentsOf: line)
            appendedBytes.add(Int64(line.count), ordering: .relaxed)
            if state!.buffer.count >= Self.bufferLimit { try drain(&state!) }
        }
    }

    /// Writes everything buffered to the file.
    public func flush() throws(CaptureError) {
        try state.withLock { (state: inout State?) throws(CaptureError) in
            guard state != nil else { return }
            try drain(&state!)
        }
    }

    /// Flushes, stops the timer and closes the file. Later calls do nothing.
    public func close() throws(CaptureError) {
        timer.cancel()
        try state.withLock { (state: inout State?) throws(CaptureError) in
            guard var open = state.take() else { return }
            defer { Glibc.close(open.fd) }
            try drain(&open)
        }
    }

    private func drain(_ state: inout State) throws(CaptureError) {
        if let failure = state.failure { throw writeError(failure) }
        guard !state.buffer.isEmpty else { return }
        if let failure = Self.writeAll(state.fd, state.buffer) {
            state.failure = failure
            throw writeError(failure)
        }
        state.buffer.removeAll(keepingCapacity: true)
    }

    private func closedError() -> CaptureError {
        CaptureError(file: path, line: 0, offset: 0, message: "capture writer is closed")
    }

    private func writeError(_ failure: String) -> CaptureError {
        CaptureError(file: path, line: 0, offset: 0, message: "cannot write capture: \(failure)")
    }

    /// write(2) until everything is out; the error text on failure.
    private static func writeAll(_ fd: Int32, _ bytes: [UInt8]) -> String? {
        bytes.withUnsafeBytes { buffer -> String? in
            var offset = 0
            while offset < buffer.count {
                let n = write(fd, buffer.baseAddress! + offset, buffer.count - offset)
                if n < 0 {
                    if errno == EINTR { continue }
                    return String(cString: strerror(errno))
                }
                offset += n
            }
            return nil
        }
    }
}
