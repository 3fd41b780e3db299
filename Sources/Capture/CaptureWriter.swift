import Dispatch
import Glibc
import Synchronization
import Vocabulary

/// Writes a capture file as it happens: the header at once, then records buffered in
/// memory and written with write(2) on a background queue when the buffer passes
/// `bufferLimit` and at least every `flushInterval` (timer), and on `flush()` and `close()`.
/// An appender writes itself only when the file falls `blockingLimit` behind, which
/// bounds the memory.
///
/// Crash safety: the buffer only ever holds whole lines, and a write always starts at a
/// line boundary, so a process killed at any moment (SIGKILL included) leaves complete
/// lines followed by at most one torn line, which `CaptureReader` reports as a warning.
/// At most `flushInterval` of records (plus one buffer) can be lost.
///
/// Compression: a path ending in `.zst` is written as zstd, each flush one complete frame
/// (`ZstdFrameEncoder`), so the same holds: a crash cuts at most the last frame, and
/// `DecompressingByteSource` reads everything before it. Compression runs where writes
/// run (the background queue, or an appender at `blockingLimit`), never in `append`.
///
/// Rotation (`rotation`): the recording is a numbered set of files
/// (`CaptureRotation.partPath`), each starting with the header plus the recording's id and
/// its part number. A part ends between two flushes, so records are never split.
///
/// Threading: every method may be called from any thread. Two locks, so that an appender
/// (the proxy's loop thread) never waits for a write(2) it did not ask for:
/// - `pending` guards the buffer records are encoded into, straight from the record
///   (no line array per record, no second copy); held only while one record is encoded.
/// - `output` guards the file. A flush takes it, swaps the filled buffer for an empty
///   spare under `pending` (a pointer swap), and writes with only `output` held. Buffers
///   reach the file in the order they were filled, and lines never interleave.
/// Lock order: `output`, then `pending`; an appender takes `pending` alone.
public final class CaptureWriter: Sendable {
    /// Flushes when this many bytes are buffered.
    public static let bufferLimit = 256 * 1024
    /// The longest a complete record waits in memory.
    public static let flushInterval: Duration = .milliseconds(50)
    /// Buffered bytes at which `append` writes the buffer itself (waiting for the write in
    /// progress) instead of leaving it to the background queue: backpressure on a producer
    /// faster than the file, bounding memory. Large, because a write(2) can stall (dirty
    /// page throttling, a slow disk) and every byte of slack is relay time not stalled: at
    /// 1 MiB, a capture reader stopped for 1.5 s stalled 5,000 msgs/s of small messages for
    /// over a second; at 32 MiB that rate rides out 13 s (bulk traffic at 200 MB/s, 160 ms).
    static let blockingLimit = 32 * 1024 * 1024
    /// A buffer grown past this is released after its write, not kept: buffers of a
    /// steady capture (about `bufferLimit`, doubled while growing) keep their storage, one
    /// grown by a stall or a huge record gives it back.
    static let keptCapacity = 4 * 1024 * 1024

    /// Lines encoded and not yet handed to write(2).
    private struct Pending: ~Copyable {
        var buffer: [UInt8] = []
        var closed = false
        /// Set by a failed write; every later append throws it.
        var failure: String?
    }

    /// The file, and the buffer being written (kept between writes for its capacity).
    private struct Output: ~Copyable {
        /// -1 once closed.
        var fd: Int32
        var spare: [UInt8] = []
        /// The file being written (a part's name when rotating).
        var path: String
        /// 1 for an unrotated capture.
        var part = 1
        /// Bytes in the current file, and how many of them are its header.
        var partBytes: Int64 = 0
        var headerBytes: Int64 = 0
        var partStarted: ContinuousClock.Instant
        /// Bytes written to every file so far.
        var fileBytes: Int64 = 0
        /// Set for a `.zst` capture.
        var encoder: ZstdFrameEncoder?
    }

    /// The path asked for (with rotation, the parts' names derive from it).
    public let path: String
    public let rotation: CaptureRotation?
    /// The header every part starts with (its `part` set per file).
    private let header: CaptureHeader
    private let replacing: Bool
    private let pending: Mutex<Pending>
    private let output: Mutex<Output>
    // nonisolated(unsafe): set once in init, then only `cancel()`ed in close(); Dispatch
    // sources are thread-safe for that.
    nonisolated(unsafe) private let timer: DispatchSourceTimer
    /// Runs the timer's flushes and those `append` asks for when the buffer is full.
    private let queue = DispatchQueue(label: "faultline.capture-writer.flush")
    /// Set while an asked-for flush is queued, so a burst of full buffers queues one.
    private let flushQueued = Atomic<Bool>(false)

    /// Creates `path` and writes `header` as its first line, immediately. An existing file
    /// is truncated only with `replacing` (the default, for callers that own the path);
    /// without it the file is created exclusively (`O_EXCL`, no window between a check and
    /// the open), so a capture is never overwritten by accident. A path ending in `.zst`
    /// is written compressed. With `rotation`, the files are `path`'s numbered parts
    /// (`CaptureRotation.partPath`), from part 1.
    /// Throws `CaptureError` naming the file when it cannot be created or written.
    public init(path: String, header: CaptureHeader, replacing: Bool = true,
                rotation: CaptureRotation? = nil) throws(CaptureError) {
        self.path = path
        self.rotation = rotation
        self.replacing = replacing
        var header = header
        if rotation != nil {
            header.recording = header.recording ?? Self.newRecordingID()
            header.part = 1
        }
        self.header = header
        let encoder = CaptureCompression.forWriting(path) == .zstd ? try ZstdFrameEncoder() : nil
        let first = rotation == nil ? path : CaptureRotation.partPath(path, part: 1)
        var output = Output(fd: -1, path: first, partStarted: .now, encoder: encoder)
        try Self.openPart(&output, header: header, replacing: replacing)
        let headerLine = RecordCoding.encode(.header(header))
        pending = Mutex(Pending())
        self.output = Mutex(output)
        appendedBytes = Atomic(Int64(headerLine.count))
        timer = DispatchSource.makeTimerSource(queue: queue)
        let interval = DispatchTimeInterval.milliseconds(Int(Self.flushInterval.components.attoseconds / 1_000_000_000_000_000))
        timer.schedule(deadline: .now() + interval, repeating: interval, leeway: .milliseconds(10))
        timer.setEventHandler { [weak self] in try? self?.flush() }
        timer.resume()
    }

    /// 16 hex digits, random: what ties a rotated recording's parts together.
    static func newRecordingID() -> String {
        let value = UInt64.random(in: 0...UInt64.max)
        let hex = String(value, radix: 16)
        return String(repeating: "0", count: 16 - hex.count) + hex
    }

    /// Opens `output.path` and writes `header` (with `output.part`) as its first line.
    private static func openPart(_ output: inout Output, header: CaptureHeader, replacing: Bool) throws(CaptureError) {
        let path = output.path
        var fd = open(path, O_WRONLY | O_CREAT | O_CLOEXEC | (replacing ? O_TRUNC : O_EXCL), 0o644)
        if fd < 0, errno == EEXIST, !isRegularFile(path) {
            // A device or a pipe (`/dev/null`, a FIFO read by another program) holds no capture.
            fd = open(path, O_WRONLY | O_CLOEXEC)
        }
        guard fd >= 0 else {
            let reason = errno == EEXIST ? "the file exists; not overwriting a capture (pass --overwrite to replace it)"
                : String(cString: strerror(errno))
            throw CaptureError(file: path, line: 0, offset: 0, message: "cannot create capture file: \(reason)")
        }
        var header = header
        if header.part != nil { header.part = output.part }
        var bytes = RecordCoding.encode(.header(header))
        if let encoder = output.encoder {
            switch encoder.compress(bytes) {
            case .success(let frame): bytes = frame
            case .failure(let error):
                Glibc.close(fd)
                throw CaptureError(file: path, line: 1, offset: 0, message: "cannot write capture header: \(error.message)")
            }
        }
        if let failure = writeAll(fd, bytes) {
            Glibc.close(fd)
            throw CaptureError(file: path, line: 1, offset: 0, message: "cannot write capture header: \(failure)")
        }
        output.fd = fd
        output.partBytes = Int64(bytes.count)
        output.headerBytes = Int64(bytes.count)
        output.fileBytes += Int64(bytes.count)
        output.partStarted = .now
    }

    /// Whether `path` names a regular file (following links), the only kind `replacing` protects.
    public static func isRegularFile(_ path: String) -> Bool {
        var info = stat()
        return stat(path, &info) == 0 && (info.st_mode & S_IFMT) == S_IFREG
    }

    deinit {
        timer.cancel()
        try? close()
    }

    /// Bytes of every record appended so far, header included, whether already written
    /// to the file or still buffered. Stays at its last value after `close()`.
    public var bytesWritten: Int64 { appendedBytes.load(ordering: .relaxed) }
    private let appendedBytes: Atomic<Int64>

    /// Bytes handed to the files so far (compressed for a `.zst` capture; every part's).
    public var fileBytes: Int64 { output.withLock { $0.fileBytes } }
    /// The file being written now: `path`, or the current part when rotating.
    public var currentPath: String { output.withLock { $0.path } }
    /// The number of files written so far (1 without rotation).
    public var parts: Int { output.withLock { $0.part } }

    /// What was written, for a closing summary.
    public struct Totals: Sendable, Equatable, CustomStringConvertible {
        /// The capture's JSON Lines bytes (before compression).
        public var bytes: Int64
        /// Bytes in the files (compressed, all parts).
        public var fileBytes: Int64
        public var compressed: Bool
        public var firstPath: String
        public var lastPath: String
        public var parts: Int

        /// "session.jsonl (18.7 KB)", "soak.jsonl.zst (18.7 KB, 2.9 KB zstd)", or with
        /// rotation "soak.0001.jsonl.zst to soak.0003.jsonl.zst (3 parts, ...)".
        public var description: String {
            func size(_ bytes: Int64) -> String {
                bytes >= 1 << 20 ? "\(Double(bytes * 10 / (1 << 20)) / 10) MB" : bytes >= 1024 ? "\(Double(bytes * 10 / 1024) / 10) KB" : "\(bytes) bytes"
            }
            let files = parts > 1 ? "\(firstPath) to \(lastPath) (\(parts) parts, " : "\(firstPath) ("
            return files + size(bytes) + (compressed ? ", \(size(fileBytes)) zstd)" : ")")
        }
    }

    public var totals: Totals {
        output.withLock { output in
            Totals(bytes: bytesWritten, fileBytes: output.fileBytes, compressed: output.encoder != nil,
                   firstPath: rotation == nil ? path : CaptureRotation.partPath(path, part: 1),
                   lastPath: output.path, parts: output.part)
        }
    }

    /// Encodes one record into the buffer. A full buffer is written on the background
    /// queue (the proxy's loop thread goes on relaying meanwhile), or here when the file
    /// is `blockingLimit` behind. Throws after the file was closed or once a write has
    /// failed (disk full, ...; a background failure surfaces at the next append).
    public func append(_ record: CaptureRecord) throws(CaptureError) {
        let buffered = try pending.withLock { (pending: inout Pending) throws(CaptureError) -> Int in
            if pending.closed { throw closedError() }
            if let failure = pending.failure { throw writeError(failure) }
            let before = pending.buffer.count
            RecordCoding.encode(record, into: &pending.buffer)
            appendedBytes.add(Int64(pending.buffer.count - before), ordering: .relaxed)
            return pending.buffer.count
        }
        if buffered >= Self.blockingLimit {
            try flush()
        } else if buffered >= Self.bufferLimit, !flushQueued.exchange(true, ordering: .acquiringAndReleasing) {
            queue.async { [weak self] in
                self?.flushQueued.store(false, ordering: .releasing)
                try? self?.flush()
            }
        }
    }

    /// Writes everything buffered to the file.
    public func flush() throws(CaptureError) {
        try output.withLock { (output: inout Output) throws(CaptureError) in
            guard output.fd >= 0 else { return }
            try writePending(&output, closing: false)
        }
    }

    /// Flushes, stops the timer and closes the file. Later calls do nothing.
    public func close() throws(CaptureError) {
        timer.cancel()
        try output.withLock { (output: inout Output) throws(CaptureError) in
            guard output.fd >= 0 else { return }
            defer {
                Glibc.close(output.fd)
                output.fd = -1
            }
            try writePending(&output, closing: true)
        }
    }

    /// Takes the buffered lines (an array swap under `pending`) and writes them; the
    /// caller holds `output`. `closing` refuses later appends in the same step, so no
    /// record can land after the last write.
    private func writePending(_ output: inout Output, closing: Bool) throws(CaptureError) {
        let failure = pending.withLock { (pending: inout Pending) -> String? in
            if closing { pending.closed = true }
            if pending.failure == nil { swap(&pending.buffer, &output.spare) }
            return pending.failure
        }
        if let failure { throw writeError(failure) }
        guard !output.spare.isEmpty else { return }
        var written = output.spare
        if let encoder = output.encoder {
            switch encoder.compress(output.spare) {
            case .success(let frame): written = frame
            case .failure(let error):
                pending.withLock { $0.failure = error.message }
                throw writeError(error.message)
            }
        }
        if let rotation, rotation.isDue(partBytes: output.partBytes, headerBytes: output.headerBytes,
                                        adding: written.count, partAge: .now - output.partStarted) {
            Glibc.close(output.fd)
            output.fd = -1
            output.part += 1
            output.path = CaptureRotation.partPath(path, part: output.part)
            do {
                try Self.openPart(&output, header: header, replacing: replacing)
            } catch {
                pending.withLock { $0.failure = error.message }
                throw error
            }
        }
        if let failure = Self.writeAll(output.fd, written) {
            pending.withLock { $0.failure = failure }
            throw writeError(failure)
        }
        output.partBytes += Int64(written.count)
        output.fileBytes += Int64(written.count)
        if output.spare.capacity > Self.keptCapacity {
            output.spare = []
        } else {
            output.spare.removeAll(keepingCapacity: true)
        }
    }

    private func closedError() -> CaptureError {
        CaptureError(file: path, line: 0, offset: 0, message: "capture writer is closed")
    }

    private func writeError(_ failure: String) -> CaptureError {
        CaptureError(file: path, line: 0, offset: 0, message: "cannot write capture: \(failure)")
    }

    /// write(2) until everything is out; the error text on failure.
    private static func writeAll(_ fd: Int32, _ bytes: [UInt8]) -> String? {
        FileDescriptorOutput.writeAll(fd, bytes).map { String(cString: strerror($0)) }
    }
}
