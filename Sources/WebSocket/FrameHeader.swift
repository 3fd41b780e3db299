/// A frame header (RFC 6455 5.2) as it stood on the wire: the one parser of header bytes.
/// `FrameDecoder` cuts frames with it (on its one-step path and its incremental one alike),
/// and a reader that picks a stream up mid-way judges candidate frame starts with it.
///
/// It reads structure only and accepts every bit pattern; what a header may not say
/// (a length with its top bit set, a length over a limit, a non-minimal encoding, reserved
/// opcodes) is for the caller to judge, since a relay must carry some of it.
public struct FrameHeader: Sendable, Equatable {
    public var fin: Bool
    public var rsv1: Bool
    public var rsv2: Bool
    public var rsv3: Bool
    public var opcode: Opcode
    /// The masking key, or nil for an unmasked frame.
    public var maskingKey: MaskingKey?
    /// The payload length as sent: 64-bit lengths may have their top bit set (invalid).
    public var payloadLength: UInt64
    /// Bytes of the header: 2 to 14.
    public var byteCount: Int
    /// The length was sent in a longer encoding than needed (16 bits for 125 or less, 64
    /// bits for 65,535 or less), which RFC 6455 5.2 forbids.
    public var hasNonMinimalLength: Bool

    /// The header at the start of `bytes`, or nil when it is not all there yet.
    @inline(__always)
    public static func parse(_ bytes: UnsafeRawBufferPointer) -> FrameHeader? {
        let available = bytes.count
        guard available >= 2 else { return nil }
        let first = bytes[0], second = bytes[1]
        var byteCount = 2
        var length = UInt64(second & 0x7F)
        var nonMinimal = false
        if length == 126 {
            guard available >= 4 else { return nil }
            length = UInt64(bytes[2]) << 8 | UInt64(bytes[3])
            nonMinimal = length <= 125
            byteCount = 4
        } else if length == 127 {
            guard available >= 10 else { return nil }
            length = 0
            for i in 2..<10 { length = length << 8 | UInt64(bytes[i]) }
            nonMinimal = length <= 0xFFFF
            byteCount = 10
        }
        var key: MaskingKey?
        if second & 0x80 != 0 {
            guard available >= byteCount + 4 else { return nil }
            key = MaskingKey(bytes[byteCount], bytes[byteCount + 1], bytes[byteCount + 2], bytes[byteCount + 3])
            byteCount += 4
        }
        return FrameHeader(fin: first & 0x80 != 0, rsv1: first & 0x40 != 0, rsv2: first & 0x20 != 0,
                           rsv3: first & 0x10 != 0, opcode: Opcode(rawValue: first & 0x0F), maskingKey: key,
                           payloadLength: length, byteCount: byteCount, hasNonMinimalLength: nonMinimal)
    }

    /// The frame this header starts, with no payload yet.
    public var emptyFrame: Frame {
        Frame(fin: fin, rsv1: rsv1, rsv2: rsv2, rsv3: rsv3, opcode: opcode, maskingKey: maskingKey, payload: [])
    }
}
