import Glibc

/// Splits a byte source's bytes (a file descriptor's, or a decompressor's over one) into
/// lines, reading fixed-size chunks: memory stays at one chunk plus the longest line,
/// whatever the file's size. A class because it owns the source (a descriptor closed in
/// deinit) and its buffer, and a `RecordSource` holding it must be copyable.
///
/// Three ways to take what it read: `nextView` lends one line where it lies in the buffer
/// (no copy: the capture reader decodes it in place), `next` copies one line out, and
/// `nextLines` copies out a run of whole lines for a worker thread to split and decode.
public final class LineReader {
    public enum Line {
        /// A line that ended with a newline (the newline not included); from `nextLines`,
        /// one or more whole lines, each with its newline.
        case complete([UInt8])
        /// Bytes after the last newline at end of input.
        case unterminated([UInt8])
    }

    /// A line as it lies in the reader's buffer, newline not included: valid only until the
    /// next call on the reader.
    public struct View {
        public var bytes: UnsafeBufferPointer<UInt8>
        /// False for the bytes after the last newline at end of input.
        public var terminated: Bool
    }

    public struct TooLong: Error {
        public var limit: Int
    }

    private enum State {
        case reading
        case endOfInput
    }

    /// Where the bytes come from; `endWarning` says whether it ended cleanly.
    public let source: ByteSource
    private let chunkSize: Int
    /// The longest line (newline not counted) read before `TooLong`.
    public let maxLineLength: Int
    private var state = State.reading
    /// The bytes read and not yet dropped: `storage[0..<count]` of `capacity`.
    private var storage: UnsafeMutablePointer<UInt8>
    private var capacity: Int
    private var count = 0
    /// Start of the unread bytes in `storage`.
    private var start = 0
    /// Where the newline search resumes: bytes in `start..<scanned` are known not to be newlines.
    private var scanned = 0
    /// A read failure met while `nextLines` still had whole lines to hand out: thrown next.
    private var pendingError: (any Error)?
    /// Bytes consumed (lines returned, newlines included) since the start of input.
    public private(set) var consumed: Int64 = 0

    /// Reads from `fd`, after first returning the bytes of `prefix` (already read by a
    /// caller that peeked at the input). Closes `fd` when done if `ownsDescriptor`.
    public convenience init(fd: Int32, ownsDescriptor: Bool, prefix: [UInt8] = [], chunkSize: Int = 64 * 1024,
                            maxLineLength: Int = 100 * 1024 * 1024) {
        self.init(source: FileByteSource(fd: fd, ownsDescriptor: ownsDescriptor), prefix: prefix,
                  chunkSize: chunkSize, maxLineLength: maxLineLength)
    }

    /// Reads from `source`, after first returning the bytes of `prefix`.
    public init(source: ByteSource, prefix: [UInt8] = [], chunkSize: Int = 64 * 1024,
                maxLineLength: Int = 100 * 1024 * 1024) {
        self.source = source
        self.chunkSize = max(1, chunkSize)
        self.maxLineLength = maxLineLength
        capacity = max(prefix.count, self.chunkSize)
        storage = .allocate(capacity: capacity)
        prefix.withUnsafeBufferPointer { if let base = $0.baseAddress { storage.update(from: base, count: $0.count) } }
        count = prefix.count
    }

    deinit { storage.deallocate() }

    /// The next line, copied out, or nil at end of input. Throws `TooLong` for a line over
    /// the limit (newline not counted), `Errno`-style failures of read(2) as `ReadFailure` and damaged compressed
    /// input as `DecompressionError`.
    public func next() throws -> Line? {
        guard let view = try nextView() else { return nil }
        return view.terminated ? .complete(Array(view.bytes)) : .unterminated(Array(view.bytes))
    }

    /// The next line where it lies in the buffer (valid until the next call), or nil at
    /// end of input. Throws as `next`.
    public func nextView() throws -> View? {
        while true {
            if let newline = findNewline() {
                if newline - start > maxLineLength { throw TooLong(limit: maxLineLength) }
                let view = View(bytes: UnsafeBufferPointer(start: storage + start, count: newline - start), terminated: true)
                consumed += Int64(newline + 1 - start)
                start = newline + 1
                scanned = start
                return view
            }
            if let error = pendingError {
                pendingError = nil
                throw error
            }
            if count - start > maxLineLength { throw TooLong(limit: maxLineLength) }
            switch state {
            case .endOfInput:
                guard start < count else { return nil }
                let view = View(bytes: UnsafeBufferPointer(start: storage + start, count: count - start), terminated: false)
                consumed += Int64(count - start)
                start = count
                scanned = start
                return view
            case .reading:
                try fill()
            }
        }
    }

    /// Whole lines: once at least `target` bytes are read ahead (or the input ended), every
    /// whole line among them, copied out as one `.complete` array ending with a newline;
    /// then the bytes after the last newline as `.unterminated`; then nil. The lines are
    /// not checked against the length limit (their reader checks each): only bytes without
    /// a newline past the limit throw `TooLong`. Lines read before a
    /// read failure are handed out first, and the failure is thrown by the next call, so
    /// that it is met at the same line as `next` would meet it. Throws as `next`.
    public func nextLines(target: Int) throws -> Line? {
        while true {
            let unread = count - start
            if unread >= target || state == .endOfInput || pendingError != nil {
                if let end = findLastNewline() {
                    let lines = Array(UnsafeBufferPointer(start: storage + start, count: end + 1 - start))
                    consumed += Int64(lines.count)
                    start = end + 1
                    scanned = start
                    return .complete(lines)
                }
                if let error = pendingError {
                    pendingError = nil
                    throw error
                }
                if unread > maxLineLength { throw TooLong(limit: maxLineLength) }
                if state == .endOfInput {
                    guard start < count else { return nil }
                    let rest = Array(UnsafeBufferPointer(start: storage + start, count: unread))
                    consumed += Int64(unread)
                    start = count
                    scanned = start
                    return .unterminated(rest)
                }
            }
            do { try fill() } catch { pendingError = error }
        }
    }

    public struct ReadFailure: Error {
        public var message: String
    }

    /// The first newline at or after `scanned`.
    private func findNewline() -> Int? {
        guard scanned < count, let hit = memchr(storage + scanned, 0x0A, count - scanned) else {
            scanned = count
            return nil
        }
        return UnsafeMutableRawPointer(hit) - UnsafeMutableRawPointer(storage)
    }

    /// The last newline among the unread bytes (those before `scanned` hold none).
    private func findLastNewline() -> Int? {
        var i = count
        while i > scanned {
            i -= 1
            if storage[i] == 0x0A { return i }
        }
        scanned = count
        return nil
    }

    /// Drops consumed bytes, then appends up to one chunk from the source, growing the
    /// buffer only for a line longer than what it holds.
    private func fill() throws {
        if start > 0 {
            let unread = count - start
            if unread > 0 { memmove(storage, storage + start, unread) }
            count = unread
            scanned -= start
            start = 0
        }
        if capacity - count < chunkSize {
            let grownCapacity = max(capacity * 2, count + chunkSize)
            let grown = UnsafeMutablePointer<UInt8>.allocate(capacity: grownCapacity)
            grown.update(from: storage, count: count)
            storage.deallocate()
            storage = grown
            capacity = grownCapacity
        }
        let n = try source.read(into: UnsafeMutableRawBufferPointer(start: storage + count, count: chunkSize))
        count += max(0, min(n, chunkSize))
        if n == 0 { state = .endOfInput }
    }
}
