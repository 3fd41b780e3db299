import Glibc

/// Bytes read in pieces, from a file descriptor or through a decompressor over one. What
/// `LineReader` splits into lines: a capture reads the same whether it is plain,
/// zstd or gzip.
public protocol ByteSource: AnyObject {
    /// Reads up to `buffer.count` bytes into `buffer`; 0 means nothing more for now (the end
    /// of a file; a followed file may grow later). Throws `LineReader.ReadFailure` when
    /// read(2) fails and `DecompressionError` for damaged compressed data.
    func read(into buffer: UnsafeMutableRawBufferPointer) throws -> Int
    /// Said once the input has ended, when it ended somewhere it should not have (a
    /// compressed frame cut short: a writer killed mid-write). Nil for a clean end.
    var endWarning: String? { get }
}

/// A file descriptor's bytes, after `prefix` (bytes a caller already read to look at).
/// Closes the descriptor in deinit when it owns it.
public final class FileByteSource: ByteSource {
    public let fd: Int32
    private let ownsDescriptor: Bool
    private var prefix: [UInt8]
    private var prefixStart = 0

    public init(fd: Int32, ownsDescriptor: Bool, prefix: [UInt8] = []) {
        self.fd = fd
        self.ownsDescriptor = ownsDescriptor
        self.prefix = prefix
    }

    deinit { if ownsDescriptor { close(fd) } }

    public var endWarning: String? { nil }

    public func read(into buffer: UnsafeMutableRawBufferPointer) throws -> Int {
        guard buffer.count > 0 else { return 0 }
        if prefixStart < prefix.count {
            let n = min(buffer.count, prefix.count - prefixStart)
            prefix.withUnsafeBytes { buffer.baseAddress!.copyMemory(from: $0.baseAddress! + prefixStart, byteCount: n) }
            prefixStart += n
            if prefixStart == prefix.count { prefix = [] ; prefixStart = 0 }
            return n
        }
        while true {
            let n = Glibc.read(fd, buffer.baseAddress!, buffer.count)
            if n < 0, errno == EINTR { continue }
            if n < 0 { throw LineReader.ReadFailure(message: String(cString: strerror(errno))) }
            return n
        }
    }

    /// Up to `count` first bytes (fewer only at the end of input), read so that they are
    /// also returned again by later reads: for looking at magic bytes.
    public func peek(_ count: Int) throws -> [UInt8] {
        var head: [UInt8] = []
        var chunk = [UInt8](repeating: 0, count: count)
        while head.count < count {
            let n = try chunk.withUnsafeMutableBytes { try read(into: UnsafeMutableRawBufferPointer(rebasing: $0[0..<(count - head.count)])) }
            if n == 0 { break }
            head += chunk[0..<n]
        }
        prefix = head + prefix[prefixStart...]
        prefixStart = 0
        return head
    }
}
