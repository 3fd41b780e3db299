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

    /// Length of the padded base64 text of `count` bytes.
    public static func encodedCount(_ count: Int) -> Int { (count + 2) / 3 * 4 }

    /// Appends the base64 text of `bytes` to `out`.
    public static func encode(_ bytes: [UInt8], into out: inout [UInt8]) {
        bytes.withUnsafeBufferPointer { encode($0, into: &out) }
    }

    /// Appends the base64 text of `input` to `out`: binary frame payloads are encoded on
    /// the proxy's loop thread when recording (issue 3's bulk benchmark).
    ///
    /// The text is stored straight into `out`'s new storage (see `Base64Text`): no zero
    /// fill of the extension first, so the output is written once.
    public static func encode(_ input: UnsafeBufferPointer<UInt8>, into out: inout [UInt8]) {
        guard !input.isEmpty else { return }
        out.append(contentsOf: Base64Text(input))
    }

    /// Stores the base64 text of `input`, exactly `encodedCount(input.count)` bytes, at `dst`.
    ///
    /// Six input bytes (one unaligned 8-byte load) give four table lookups and four 2-byte
    /// stores, two such groups per loop turn; the last few bytes go three at a time, then
    /// the padding. Every store lands inside the text: a group starting at input offset `i`
    /// (a multiple of 3) writes output offsets `i / 3 * 4 ..< (i + 6) / 3 * 4`, and its
    /// load reads `i ..< i + 8`, inside the input because the loops require `i + 8 <= n`
    /// (`i + 14 <= n` for two groups). Offsets use wrapping arithmetic (`&+`): they are
    /// bounded by `n` and the text length, so no overflow check is needed in the loop.
    static func encode(_ input: UnsafeBufferPointer<UInt8>, to dst: UnsafeMutableRawPointer) {
        let n = input.count
        guard n > 0, let src = UnsafeRawPointer(input.baseAddress) else { return }
        pairs.withUnsafeBufferPointer { pairs in
            /// Input bytes `i ..< i + 6` to output bytes `o ..< o + 8`.
            @inline(__always) func sixBytes(_ i: Int, _ o: Int) {
                // Bytes i..<i+6 as the top 48 bits of a big-endian load; 2 bytes unused.
                let v = Int(truncatingIfNeeded: UInt64(bigEndian: src.loadUnaligned(fromByteOffset: i, as: UInt64.self)) &>> 16)
                dst.storeBytes(of: pairs[v &>> 36], toByteOffset: o, as: UInt16.self)
                dst.storeBytes(of: pairs[v &>> 24 & 0xFFF], toByteOffset: o &+ 2, as: UInt16.self)
                dst.storeBytes(of: pairs[v &>> 12 & 0xFFF], toByteOffset: o &+ 4, as: UInt16.self)
                dst.storeBytes(of: pairs[v & 0xFFF], toByteOffset: o &+ 6, as: UInt16.self)
            }
            var i = 0
            var o = 0
            while i &+ 14 <= n {
                sixBytes(i, o)
                sixBytes(i &+ 6, o &+ 8)
                i &+= 12
                o &+= 16
            }
            while i &+ 8 <= n {
                sixBytes(i, o)
                i &+= 6
                o &+= 8
            }
            while i + 3 <= n {
                let v = Int(input[i]) << 16 | Int(input[i + 1]) << 8 | Int(input[i + 2])
                dst.storeBytes(of: pairs[v >> 12], toByteOffset: o, as: UInt16.self)
                dst.storeBytes(of: pairs[v & 0xFFF], toByteOffset: o + 2, as: UInt16.self)
                i += 3
                o += 4
            }
            // The last 1 or 2 bytes, padded.
            if i < n {
                let second = i + 1 < n ? Int(input[i + 1]) : 0
                let v = Int(input[i]) << 16 | second << 8
                dst.storeBytes(of: pairs[v >> 12], toByteOffset: o, as: UInt16.self)
                dst.storeBytes(of: i + 1 < n ? alphabet[v >> 6 & 0x3F] : UInt8(ascii: "="), toByteOffset: o + 2, as: UInt8.self)
                dst.storeBytes(of: UInt8(ascii: "="), toByteOffset: o + 3, as: UInt8.self)
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
