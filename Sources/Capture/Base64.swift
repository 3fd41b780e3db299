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

    /// Appends the base64 text of `bytes` to `out`.
    public static func encode(_ bytes: [UInt8], into out: inout [UInt8]) {
        out.reserveCapacity(out.count + (bytes.count + 2) / 3 * 4)
        bytes.withUnsafeBufferPointer { input in
            alphabet.withUnsafeBufferPointer { table in
                var i = 0
                let n = input.count
                while i + 3 <= n {
                    let v = UInt32(input[i]) << 16 | UInt32(input[i + 1]) << 8 | UInt32(input[i + 2])
                    out.append(table[Int(v >> 18)])
                    out.append(table[Int(v >> 12 & 0x3F)])
                    out.append(table[Int(v >> 6 & 0x3F)])
                    out.append(table[Int(v & 0x3F)])
                    i += 3
                }
                switch n - i {
                case 1:
                    let v = UInt32(input[i]) << 16
                    out.append(table[Int(v >> 18)])
                    out.append(table[Int(v >> 12 & 0x3F)])
                    out.append(UInt8(ascii: "="))
                    out.append(UInt8(ascii: "="))
                case 2:
                    let v = UInt32(input[i]) << 16 | UInt32(input[i + 1]) << 8
                    out.append(table[Int(v >> 18)])
                    out.append(table[Int(v >> 12 & 0x3F)])
                    out.append(table[Int(v >> 6 & 0x3F)])
                    out.append(UInt8(ascii: "="))
                default:
                    break
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
