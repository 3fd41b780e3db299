import CZlib

/// Inflates the messages of one direction, keeping the LZ77 window between messages unless
/// no-context-takeover was agreed. A class because it owns a z_stream at a fixed address
/// (zlib keeps pointers into it). Not thread-safe: one direction of one connection.
public final class MessageInflater {
    /// The 4 bytes RFC 7692 7.2.2 says to append before inflating a message.
    static let tail: [UInt8] = [0x00, 0x00, 0xFF, 0xFF]

    private let stream: UnsafeMutablePointer<z_stream>
    private let noContextTakeover: Bool
    private let windowBits: Int32

    public init(windowBits: Int, noContextTakeover: Bool) {
        self.noContextTakeover = noContextTakeover
        // A raw inflater accepts 8...15; a larger window than agreed is always safe.
        self.windowBits = Int32(min(15, max(8, windowBits)))
        stream = .allocate(capacity: 1)
        stream.initialize(to: z_stream())
        let status = CZlib_inflateInit2(stream, -self.windowBits)
        precondition(status == Z_OK, "zlib inflateInit2 failed (\(status)): out of memory")
    }

    deinit {
        inflateEnd(stream)
        stream.deinitialize(count: 1)
        stream.deallocate()
    }

    /// One whole message's payload (all its frames' payloads joined), without the 00 00 ff ff tail.
    /// Throws `WebSocketError.payloadTooLarge` (1009) past `maxOutput` bytes and
    /// `DeflateError` (1007) for data zlib rejects; either way the inflater is reset, so the
    /// next message can still be tried.
    public func inflate(_ message: [UInt8], maxOutput: Int = FrameDecoder.defaultMaxPayload) throws -> [UInt8] {
        // An empty payload carries no block at all (some deflaters send one for an empty
        // message); the tail alone would be misread after a byte-aligned sync flush.
        if message.isEmpty {
            if noContextTakeover { inflateReset(stream) }
            return []
        }
        return try inflatePrefix(message, keep: Int.max, maxOutput: maxOutput).prefix
    }

    /// Inflates one whole message, so that the window shared with the next messages stays
    /// in step, but keeps only its first `keep` bytes; also returns the inflated length. A
    /// reader that records messages for analysis needs their start, not 64 MiB of a
    /// decompression bomb (20 such messages in a 1.3 MB pcap once took it to 581 MB).
    public func inflatePrefix(_ message: [UInt8], keep: Int,
                              maxOutput: Int = FrameDecoder.defaultMaxPayload) throws -> (prefix: [UInt8], length: Int) {
        if message.isEmpty {
            if noContextTakeover { inflateReset(stream) }
            return ([], 0)
        }
        var output: [UInt8] = []
        var length = 0
        do {
            try run(message, into: &output, length: &length, keep: keep, maxOutput: maxOutput)
            try run(Self.tail, into: &output, length: &length, keep: keep, maxOutput: maxOutput)
        } catch {
            inflateReset(stream)
            throw error
        }
        if noContextTakeover { inflateReset(stream) }
        return (output, length)
    }

    /// Feeds `input` through inflate with Z_SYNC_FLUSH until it is all consumed and all its
    /// output produced.
    private func run(_ input: [UInt8], into output: inout [UInt8], length: inout Int, keep: Int, maxOutput: Int) throws {
        guard !input.isEmpty else { return }
        var chunk = [UInt8](repeating: 0, count: 16 * 1024)
        try input.withUnsafeBufferPointer { inputBuffer in
            stream.pointee.next_in = UnsafeMutablePointer(mutating: inputBuffer.baseAddress)
            stream.pointee.avail_in = UInt32(inputBuffer.count)
            defer {
                stream.pointee.next_in = nil
                stream.pointee.avail_in = 0
            }
            while true {
                let (status, produced) = chunk.withUnsafeMutableBufferPointer { out -> (Int32, Int) in
                    stream.pointee.next_out = out.baseAddress
                    stream.pointee.avail_out = UInt32(out.count)
                    let status = CZlib.inflate(stream, Z_SYNC_FLUSH)
                    let produced = out.count - Int(stream.pointee.avail_out)
                    stream.pointee.next_out = nil
                    stream.pointee.avail_out = 0
                    return (status, produced)
                }
                if produced > 0 {
                    guard length + produced <= maxOutput else {
                        throw WebSocketError(.payloadTooLarge,
                                             "inflated message exceeds the limit of \(maxOutput) bytes",
                                             closeCode: .messageTooBig)
                    }
                    length += produced
                    if output.count < keep { output.append(contentsOf: chunk[0..<min(produced, keep - output.count)]) }
                }
                switch status {
                case Z_OK:
                    // More output may be pending while the chunk came back full.
                    if stream.pointee.avail_in == 0 && produced < chunk.count { return }
                case Z_BUF_ERROR:
                    // No progress possible: all input used and all output flushed.
                    if stream.pointee.avail_in == 0 { return }
                    throw DeflateError("compressed message cannot be inflated (zlib made no progress)")
                case Z_STREAM_END:
                    // The sender set BFINAL; the next message starts a new stream.
                    inflateReset(stream)
                    if stream.pointee.avail_in == 0 { return }
                default:
                    let reason = stream.pointee.msg.map { String(cString: $0) } ?? "error \(status)"
                    throw DeflateError("compressed message cannot be inflated: \(reason)")
                }
            }
        }
    }
}
