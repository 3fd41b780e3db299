import CZlib
import CZstd

/// Damaged compressed input: which format, where in the compressed bytes, and what the
/// library said. Commands print it (through `CaptureError`) and exit 2.
public struct DecompressionError: Error, Sendable, Equatable, CustomStringConvertible {
    public var format: CaptureCompression
    /// Byte offset in the compressed input by which the damage was found (a decoder
    /// notices it at the end of a block, so the damage is at or before this offset, within
    /// `DecompressingByteSource.zstdStep` bytes for zstd).
    public var compressedOffset: Int64
    public var reason: String

    public var description: String {
        "corrupt \(format.rawValue) data (detected by byte \(compressedOffset) of the compressed input): \(reason)"
    }
}

/// Decompresses a zstd or gzip stream read from `upstream`, in constant memory: one input
/// buffer and the decoder's own window (zstd windows are refused past 32 MiB, so a
/// hostile frame header cannot make it allocate more). Concatenated zstd frames and gzip
/// members read as one stream, as the `zstd` and `gzip` tools read them.
///
/// Crash safety: a writer killed mid-flush leaves a last frame cut short. Its bytes up to
/// the cut are returned, the end is an ordinary end of input, and `endWarning` says what
/// was lost; the line reader above reports a torn last line as usual.
///
/// Following a growing file works too: at the upstream's end `read` returns 0 without
/// latching, so a later call picks up frames appended since.
public final class DecompressingByteSource: ByteSource {
    public let format: CaptureCompression
    /// The largest zstd window accepted, as a power of two (32 MiB).
    public static let maxWindowLog: Int32 = 25

    private let upstream: ByteSource
    private var input: [UInt8]
    private var inputStart = 0
    private var inputEnd = 0
    /// Compressed bytes consumed before `input`'s current contents.
    private var consumedBefore: Int64 = 0
    /// Whether a frame (member) has started and not yet ended.
    private var midFrame = false
    private var zstd: OpaquePointer?
    private var zlib: UnsafeMutablePointer<z_stream>?

    public init(format: CaptureCompression, upstream: ByteSource, inputSize: Int = 128 * 1024) throws(DecompressionError) {
        self.format = format
        self.upstream = upstream
        input = [UInt8](repeating: 0, count: max(16, inputSize))
        switch format {
        case .zstd:
            guard let context = ZSTD_createDCtx() else {
                throw DecompressionError(format: format, compressedOffset: 0, reason: "cannot allocate a zstd decoder")
            }
            ZSTD_DCtx_setParameter(context, ZSTD_d_windowLogMax, Self.maxWindowLog)
            zstd = context
        case .gzip:
            let stream = UnsafeMutablePointer<z_stream>.allocate(capacity: 1)
            stream.initialize(to: z_stream())
            // 16 + 15: gzip wrapper only, 32 KiB window.
            guard CZlib_inflateInit2(stream, 16 + MAX_WBITS) == Z_OK else {
                stream.deallocate()
                throw DecompressionError(format: format, compressedOffset: 0, reason: "cannot allocate a gzip decoder")
            }
            zlib = stream
        }
    }

    deinit {
        if let zstd { ZSTD_freeDCtx(zstd) }
        if let zlib {
            inflateEnd(zlib)
            zlib.deinitialize(count: 1)
            zlib.deallocate()
        }
    }

    /// Compressed bytes consumed so far.
    public var compressedOffset: Int64 { consumedBefore + Int64(inputStart) }

    public var endWarning: String? {
        guard midFrame || inputStart < inputEnd else { return nil }
        let unit = format == .zstd ? "frame" : "member"
        return "the last \(format.rawValue) \(unit) is cut short (the compressed input ends at byte \(consumedBefore + Int64(inputEnd)) mid-\(unit)): read up to the cut; the writer probably stopped mid-write"
    }

    public func read(into buffer: UnsafeMutableRawBufferPointer) throws -> Int {
        guard buffer.count > 0 else { return 0 }
        while true {
            if inputStart == inputEnd {
                consumedBefore += Int64(inputEnd)
                inputStart = 0
                inputEnd = try input.withUnsafeMutableBytes { try upstream.read(into: $0) }
                if inputEnd == 0 { return 0 }
            }
            let before = inputStart
            let produced = try decode(into: buffer)
            if produced > 0 { return produced }
            if inputStart == before {
                // Neither consumed nor produced: the decoder is stuck, so the data is bad.
                throw DecompressionError(format: format, compressedOffset: compressedOffset, reason: "the decoder makes no progress")
            }
        }
    }

    /// One decoder step over the buffered input; the bytes written to `buffer`.
    private func decode(into buffer: UnsafeMutableRawBufferPointer) throws(DecompressionError) -> Int {
        switch format {
        case .zstd: return try decodeZstd(into: buffer)
        case .gzip: return try decodeGzip(into: buffer)
        }
    }

    /// Compressed bytes handed to zstd per step: bounds how far past the damage an error
    /// is reported (zstd gives no position of its own).
    static let zstdStep = 16 * 1024

    private func decodeZstd(into buffer: UnsafeMutableRawBufferPointer) throws(DecompressionError) -> Int {
        let step = min(inputEnd - inputStart, Self.zstdStep)
        let (result, consumed, produced) = input.withUnsafeBytes { bytes in
            var source = ZSTD_inBuffer(src: bytes.baseAddress! + inputStart, size: step, pos: 0)
            var sink = ZSTD_outBuffer(dst: buffer.baseAddress!, size: buffer.count, pos: 0)
            let result = ZSTD_decompressStream(zstd, &sink, &source)
            return (result, source.pos, sink.pos)
        }
        if ZSTD_isError(result) != 0 {
            throw DecompressionError(format: .zstd, compressedOffset: compressedOffset + Int64(step),
                                     reason: String(cString: ZSTD_getErrorName(result)))
        }
        inputStart += consumed
        // 0: a frame ended and everything is flushed; otherwise more input is expected.
        midFrame = result != 0
        return produced
    }

    private func decodeGzip(into buffer: UnsafeMutableRawBufferPointer) throws(DecompressionError) -> Int {
        guard let stream = zlib else { return 0 }
        let (status, consumed, produced) = input.withUnsafeMutableBytes { bytes in
            stream.pointee.next_in = bytes.baseAddress!.assumingMemoryBound(to: Bytef.self) + inputStart
            stream.pointee.avail_in = UInt32(inputEnd - inputStart)
            stream.pointee.next_out = buffer.baseAddress!.assumingMemoryBound(to: Bytef.self)
            stream.pointee.avail_out = UInt32(clamping: buffer.count)
            let status = inflate(stream, Z_NO_FLUSH)
            let consumed = (inputEnd - inputStart) - Int(stream.pointee.avail_in)
            let produced = min(buffer.count, Int(UInt32.max)) - Int(stream.pointee.avail_out)
            return (status, consumed, produced)
        }
        inputStart += consumed
        switch status {
        case Z_OK, Z_BUF_ERROR:
            midFrame = true
        case Z_STREAM_END:
            // One member ended; another may follow (gzip files can be concatenated).
            midFrame = false
            inflateReset(stream)
        default:
            let reason = stream.pointee.msg.map { String(cString: $0) } ?? "zlib error \(status)"
            throw DecompressionError(format: .gzip, compressedOffset: compressedOffset, reason: reason)
        }
        return produced
    }
}
