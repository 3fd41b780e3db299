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
    let keyBytes = key.array
    // The key rotated so that index 0 of `buffer` lines up with key byte `offset % 4`.
    let shift = offset & 3
    let rotated = (0..<4).map { keyBytes[($0 + shift) & 3] }
    var index = 0
    if count >= 8 {
        var word: UInt64 = 0
        withUnsafeMutableBytes(of: &word) { w in
            for i in 0..<8 { w[i] = rotated[i & 3] }
        }
        while index + 8 <= count {
            let value = base.loadUnaligned(fromByteOffset: index, as: UInt64.self)
            base.storeBytes(of: value ^ word, toByteOffset: index, as: UInt64.self)
            index += 8
        }
    }
    while index < count {
        buffer[index] ^= rotated[index & 3]
        index += 1
    }
}
