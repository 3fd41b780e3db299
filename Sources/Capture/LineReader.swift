import Glibc

/// Splits a file descriptor's bytes into lines, reading fixed-size chunks: memory stays at
/// one chunk plus the longest line, whatever the file's size. A class because it owns the
/// descriptor (closed in deinit) and a `RecordSource` holding it must be copyable.
public final class LineReader {
    public enum Line {
        /// A line that ended with a newline (the newline not included).
        case complete([UInt8])
        /// Bytes after the last newline at end of input.
        case unterminated([UInt8])
    }

    public struct TooLong: Error {
        public var limit: Int
    }

    private enum State {
        case reading
        case endOfInput
    }

    private let fd: Int32
    private let ownsDescriptor: Bool
    private let chunkSize: Int
    private let maxLineLength: Int
    private var state = State.reading
    private var buffer: [UInt8]
    /// Start of the unread bytes in `buffer`.
    private var start = 0
    /// Where the newline search resumes: bytes before it are known not to be newlines.
    private var scanned = 0
    /// Bytes consumed (lines returned, newlines included) since the start of input.
    public private(set) var consumed: Int64 = 0

    /// Reads from `fd`, after first returning the bytes of `prefix` (already read by a
    /// caller that peeked at the input). Closes `fd` when done if `ownsDescriptor`.
    public init(fd: Int32, ownsDescriptor: Bool, prefix: [UInt8] = [], chunkSize: Int = 64 * 1024,
                maxLineLength: Int = 100 * 1024 * 1024) {
        self.fd = fd
        self.ownsDescriptor = ownsDescriptor
        self.chunkSize = max(1, chunkSize)
        self.maxLineLength = maxLineLength
        self.buffer = prefix
    }

    deinit { if ownsDescriptor { close(fd) } }

    /// The next line, or nil at end of input. Throws `TooLong` for a line over the limit and
    /// `Errno`-style failures of read(2) as `ReadFailure`.
    public func next() throws -> Line? {
        while true {
            if let newline = findNewline() {
                let line = Array(buffer[start..<newline])
                consumed += Int64(newline + 1 - start)
                start = newline + 1
                scanned = start
                return .complete(line)
            }
            if buffer.count - start > maxLineLength { throw TooLong(limit: maxLineLength) }
            switch state {
            case .endOfInput:
                guard start < buffer.count else { return nil }
                let rest = Array(buffer[start...])
                consumed += Int64(rest.count)
                start = buffer.count
                scanned = start
                return .unterminated(rest)
            case .reading:
                try fill()
            }
        }
    }

    public struct ReadFailure: Error {
        public var message: String
    }

    private func findNewline() -> Int? {
        let found: Int? = buffer.withUnsafeBufferPointer { b in
            guard scanned < b.count else { return nil }
            let base = b.baseAddress! + scanned
            guard let hit = memchr(base, 0x0A, b.count - scanned) else { return nil }
            return scanned + (UnsafeRawPointer(hit) - UnsafeRawPointer(base))
        }
        if found == nil { scanned = buffer.count }
        return found
    }

    /// Drops consumed bytes, then appends up to one chunk from the descriptor.
    private func fill() throws {
        if start > 0 {
            buffer.removeSubrange(0..<start)
            scanned -= start
            start = 0
        }
        let oldCount = buffer.count
        buffer.append(contentsOf: repeatElement(0, count: chunkSize))
        var n = 0
        while true {
            n = buffer.withUnsafeMutableBytes { read(fd, $0.baseAddress! + oldCount, chunkSize) }
            if n < 0, errno == EINTR { continue }
            break
        }
        if n < 0 {
            let message = String(cString: strerror(errno))
            buffer.removeSubrange(oldCount...)
            throw ReadFailure(message: message)
        }
        buffer.removeSubrange((oldCount + n)...)
        if n == 0 { state = .endOfInput }
    }
}
