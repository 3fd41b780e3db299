/// Standard base64 (RFC 4648, with padding) in pure Swift: binary payloads are written on
/// the proxy's hot path, where Foundation's `Data.base64EncodedString` would cost a bridge
/// and an intermediate string per frame.
public enum Base64 {
    static let alphabet: [UInt8] = Array("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/".utf8)

    /// 0...63 for alphabet bytes, 0xFF for anything else.
    static let decodeTable: [UInt8] = {
        var table = [UInt8](repeating: 0xFF, count: 256)
        for (i, byte) in alphabet.enumerated() { table[Int(byte)] = UInt8(i) }
        return table
    }()

    /// Every 12-bit group's two output characters, as the `UInt16` whose bytes in memory
    /// are those characters in order: one load and one store per 12 input bits instead of
    /// two table reads and two `Array.append` calls (each with its uniqueness and capacity
    /// checks) per character.
    static let pairs: [UInt16] = (0..<4096).map { v in
        (UInt16(alphabet[v >> 6]) | UInt16(alphabet[v & 0x3F]) << 8).littleEndian
    }

    /// Input bytes encoded per chunk: a multiple of 3, so only the last chunk pads.
    static let chunkInput = 3 * 1024
    static let chunkOutput = chunkInput / 3 * 4

    /// Length of the padded base64 text of `count` bytes.
    public static func encodedCount(_ count: Int) -> Int { (count + 2) / 3 * 4 }

    /// Appends the base64 text of `bytes` to `out`.
    public static func encode(_ bytes: [UInt8], into out: inout [UInt8]) {
        bytes.withUnsafeBufferPointer { encode($0, into: &out) }
    }

    /// Appends the base64 text of `input` to `out`, at over 1 GB/s: binary frame payloads
    /// are encoded on the proxy's loop thread when recording (issue 3's bulk benchmark).
    ///
    /// The text is built a chunk at a time in a stack buffer, then appended in one copy,
    /// so `out` grows geometrically (it may be a long-lived buffer) and no byte of it is
    /// written twice. Every store is into the chunk buffer at an offset below
    /// `chunkOutput`: at most `chunkInput / 3` groups of 4 bytes each.
    public static func encode(_ input: UnsafeBufferPointer<UInt8>, into out: inout [UInt8]) {
        let n = input.count
        guard n > 0 else { return }
        pairs.withUnsafeBufferPointer { pairs in
            withUnsafeTemporaryAllocation(of: UInt8.self, capacity: chunkOutput) { chunk in
                let dst = UnsafeMutableRawPointer(chunk.baseAddress!)
                var i = 0
                while i < n {
                    let end = min(n, i + chunkInput)
                    var o = 0
                    // Whole 3-byte groups of this chunk.
                    while i + 3 <= end {
                        let v = Int(input[i]) << 16 | Int(input[i + 1]) << 8 | Int(input[i + 2])
                        dst.storeBytes(of: pairs[v >> 12], toByteOffset: o, as: UInt16.self)
                        dst.storeBytes(of: pairs[v & 0xFFF], toByteOffset: o + 2, as: UInt16.self)
                        i += 3
                        o += 4
                    }
                    // The input's last 1 or 2 bytes (only ever in the last chunk), padded.
                    if i < end {
                        let second = i + 1 < end ? Int(input[i + 1]) : 0
                        let v = Int(input[i]) << 16 | second << 8
                        dst.storeBytes(of: pairs[v >> 12], toByteOffset: o, as: UInt16.self)
                        chunk[o + 2] = i + 1 < end ? alphabet[v >> 6 & 0x3F] : UInt8(ascii: "=")
                        chunk[o + 3] = UInt8(ascii: "=")
                        i = end
                        o += 4
                    }
                    out.append(contentsOf: UnsafeBufferPointer(rebasing: chunk[..<o]))
                }
            }
        }
    }

    public static func encode(_ bytes: [UInt8]) -> String {
        var out: [UInt8] = []
        encode(bytes, into: &out)
        return String(decoding: out, as: UTF8.self)
    }

    /// Decodes padded base64; nil for a length that is not a multiple of 4, a byte outside
    /// the alphabet, or padding anywhere but the end.
    public static func decode<S: StringProtocol>(_ text: S) -> [UInt8]? {
        let input = Array(text.utf8)
        guard input.count % 4 == 0 else { return nil }
        var out: [UInt8] = []
        out.reserveCapacity(input.count / 4 * 3)
        var i = 0
        while i < input.count {
            let isLast = i + 4 == input.count
            let pad = isLast ? (input[i + 3] == UInt8(ascii: "=") ? (input[i + 2] == UInt8(ascii: "=") ? 2 : 1) : 0) : 0
            var v: UInt32 = 0
            for j in 0..<(4 - pad) {
                let d = decodeTable[Int(input[i + j])]
                guard d != 0xFF else { return nil }
                v = v << 6 | UInt32(d)
            }
            v <<= UInt32(6 * pad)
            out.append(UInt8(v >> 16 & 0xFF))
            if pad < 2 { out.append(UInt8(v >> 8 & 0xFF)) }
            if pad < 1 { out.append(UInt8(v & 0xFF)) }
            i += 4
        }
        return out
    }
}
