/// Turns frames into wire bytes (RFC 6455 5.2). The length always takes the fewest bytes
/// (7, 16 or 64 bits), as the RFC requires; the payload is masked with the frame's own key,
/// so a relay that re-masks picks the key by setting `maskingKey`.
public enum FrameEncoder {
    /// Wire bytes of `frame`: minimal length encoding, masked with `frame.maskingKey` if set.
    public static func encode(_ frame: Frame) -> [UInt8] {
        var out: [UInt8] = []
        out.reserveCapacity(headerSize(of: frame) + frame.payload.count)
        encode(frame, into: &out)
        return out
    }

    public static func encode(_ frame: Frame, into out: inout [UInt8]) {
        var first = frame.opcode.rawValue & 0x0F
        if frame.fin { first |= 0x80 }
        if frame.rsv1 { first |= 0x40 }
        if frame.rsv2 { first |= 0x20 }
        if frame.rsv3 { first |= 0x10 }
        out.append(first)
        let maskBit: UInt8 = frame.maskingKey == nil ? 0 : 0x80
        let length = frame.payload.count
        if length <= 125 {
            out.append(maskBit | UInt8(length))
        } else if length <= 0xFFFF {
            out.append(maskBit | 126)
            out.append(UInt8(length >> 8))
            out.append(UInt8(length & 0xFF))
        } else {
            out.append(maskBit | 127)
            let wide = UInt64(length)
            for shift in stride(from: 56, through: 0, by: -8) {
                out.append(UInt8((wide >> UInt64(shift)) & 0xFF))
            }
        }
        guard let key = frame.maskingKey else {
            out.append(contentsOf: frame.payload)
            return
        }
        out.append(key.bytes.0)
        out.append(key.bytes.1)
        out.append(key.bytes.2)
        out.append(key.bytes.3)
        let start = out.count
        out.append(contentsOf: frame.payload)
        out.withUnsafeMutableBytes { raw in
            applyMask(key, to: UnsafeMutableRawBufferPointer(rebasing: raw[start...]), offset: 0)
        }
    }

    /// The header alone of `frame` with a payload of `length` bytes (for a payload sent
    /// afterwards in pieces, masked by the caller with `frame.maskingKey` from offset 0).
    public static func header(of frame: Frame, payloadLength length: Int) -> [UInt8] {
        var first = frame.opcode.rawValue & 0x0F
        if frame.fin { first |= 0x80 }
        if frame.rsv1 { first |= 0x40 }
        if frame.rsv2 { first |= 0x20 }
        if frame.rsv3 { first |= 0x10 }
        var out: [UInt8] = [first]
        let maskBit: UInt8 = frame.maskingKey == nil ? 0 : 0x80
        if length <= 125 {
            out.append(maskBit | UInt8(max(0, length)))
        } else if length <= 0xFFFF {
            out += [maskBit | 126, UInt8(length >> 8), UInt8(length & 0xFF)]
        } else {
            out.append(maskBit | 127)
            let wide = UInt64(length)
            for shift in stride(from: 56, through: 0, by: -8) { out.append(UInt8((wide >> UInt64(shift)) & 0xFF)) }
        }
        if let key = frame.maskingKey { out += [key.bytes.0, key.bytes.1, key.bytes.2, key.bytes.3] }
        return out
    }

    /// Bytes before the payload: 2, plus 2 or 8 for the extended length, plus 4 for a mask.
    public static func headerSize(of frame: Frame) -> Int {
        let length = frame.payload.count
        let extended = length <= 125 ? 0 : (length <= 0xFFFF ? 2 : 8)
        return 2 + extended + (frame.maskingKey == nil ? 0 : 4)
    }
}
