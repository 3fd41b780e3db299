import Glibc

/// Splits a byte source's bytes (a file descriptor's, or a decompressor's over one) into
/// lines, reading fixed-size chunks: memory stays at one chunk plus the longest line,
/// whatever the file's size. A class because it owns the source (a descriptor closed in
/// deinit) and a `RecordSource` holding it must be copyable.
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

    /// Where the bytes come from; `endWarning` says whether it ended cleanly.
    public let source: ByteSource
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
        self.buffer = prefix
    }

    /// The next line, or nil at end of input. Throws `TooLong` for a line over the limit,
    /// `Errno`-style failures of read(2) as `ReadFailure` and damaged compressed input as
    /// `DecompressionError`.
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
        let n: Int
        do {
            n = try buffer.withUnsafeMutableBytes {
                try source.read(into: UnsafeMutableRawBufferPointer(rebasing: $0[oldCount..<(oldCount + chunkSize)]))
            }
        } catch {
            buffer.removeSubrange(oldCount...)
            throw error
        }
        buffer.removeSubrange((oldCount + n)...)
        if n == 0 { state = .endOfInput }
    }
}
