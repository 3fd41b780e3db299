/// Masks or unmasks in place (the operation is its own inverse). `offset` is the position of
/// `bytes[0]` within the payload, for masking in pieces.
public func applyMask(_ key: MaskingKey, to bytes: inout [UInt8], offset: Int = 0) {
    bytes.withUnsafeMutableBytes { applyMask(key, to: $0, offset: offset) }
}

/// The masking loop itself, on raw memory so the decoder can unmask a slice of its buffer
/// without copying it out. Works eight bytes at a time: payloads of megabytes go through
/// here on the proxy's hot path.
@inline(__always)
func applyMask(_ key: MaskingKey, to buffer: UnsafeMutableRawBufferPointer, offset: Int) {
    let count = buffer.count
    guard count > 0, let base = buffer.baseAddress else { return }
    // Byte i of `buffer` is payload byte offset + i, so it takes key byte (offset + i) % 4.
    let shift = offset & 3
    var keyBytes = key.bytes
    withUnsafeBytes(of: &keyBytes) { keyByte in
        var index = 0
        if count >= 16 {
            var word: UInt64 = 0
            withUnsafeMutableBytes(of: &word) { w in
                for i in 0..<8 { w[i] = keyByte[(i + shift) & 3] }
            }
            while index + 8 <= count {
                let value = base.loadUnaligned(fromByteOffset: index, as: UInt64.self)
                base.storeBytes(of: value ^ word, toByteOffset: index, as: UInt64.self)
                index += 8
            }
        }
        while index < count {
            buffer[index] ^= keyByte[(index + shift) & 3]
            index += 1
        }
    }
}
