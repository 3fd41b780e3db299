import CZlib

/// Compresses the messages of one direction for permessage-deflate (RFC 7692 7.2.1): raw
/// deflate, each message ended with a sync flush whose 00 00 ff ff tail is removed. Keeps
/// the window between messages unless no-context-takeover was agreed. A class because it
/// owns a z_stream at a fixed address. Not thread-safe.
public final class MessageDeflater {
    private let stream: UnsafeMutablePointer<z_stream>
    private let noContextTakeover: Bool

    public init(windowBits: Int, noContextTakeover: Bool) {
        self.noContextTakeover = noContextTakeover
        // zlib's raw deflate supports 9...15 (8 is rejected since zlib 1.2.9).
        let bits = Int32(min(15, max(9, windowBits)))
        stream = .allocate(capacity: 1)
        stream.initialize(to: z_stream())
        let status = CZlib_deflateInit2(stream, Z_DEFAULT_COMPRESSION, Z_DEFLATED, -bits, 8, Z_DEFAULT_STRATEGY)
        precondition(status == Z_OK, "zlib deflateInit2 failed (\(status)): out of memory")
    }

    deinit {
        deflateEnd(stream)
        stream.deinitialize(count: 1)
        stream.deallocate()
    }

    public func deflate(_ message: [UInt8]) -> [UInt8] {
        var output: [UInt8] = []
        var chunk = [UInt8](repeating: 0, count: max(64, min(message.count + 64, 64 * 1024)))
        message.withUnsafeBufferPointer { input in
            stream.pointee.next_in = UnsafeMutablePointer(mutating: input.baseAddress)
            stream.pointee.avail_in = UInt32(input.count)
            while true {
                let (status, produced, full) = chunk.withUnsafeMutableBufferPointer { out -> (Int32, Int, Bool) in
                    stream.pointee.next_out = out.baseAddress
                    stream.pointee.avail_out = UInt32(out.count)
                    let status = CZlib.deflate(stream, Z_SYNC_FLUSH)
                    let left = Int(stream.pointee.avail_out)
                    stream.pointee.next_out = nil
                    stream.pointee.avail_out = 0
                    return (status, out.count - left, left == 0)
                }
                output.append(contentsOf: chunk[0..<produced])
                // Z_BUF_ERROR only means nothing was left to do; anything else is a bug in this file.
                precondition(status == Z_OK || status == Z_BUF_ERROR, "zlib deflate failed (\(status))")
                if !full { break }
            }
            stream.pointee.next_in = nil
            stream.pointee.avail_in = 0
        }
        if output.count >= 4, Array(output.suffix(4)) == MessageInflater.tail {
            output.removeLast(4)
        }
        if output.isEmpty {
            // Nothing was pending (an empty message after a flush): RFC 7692 7.2.3.6 sends a
            // single empty stored block header, which inflates to nothing on any peer.
            output = [0x00]
        }
        if noContextTakeover { deflateReset(stream) }
        return output
    }
}
