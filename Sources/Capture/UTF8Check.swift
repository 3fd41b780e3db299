/// Whether bytes are well-formed UTF-8 (RFC 3629: no overlongs, no surrogates, nothing
/// above U+10FFFF), without building a String. Decides between `text` and `b64` per frame.
enum UTF8Check {
    static func isValid(_ bytes: [UInt8]) -> Bool {
        bytes.withUnsafeBufferPointer { isValid($0) }
    }

    static func isValid(_ b: UnsafeBufferPointer<UInt8>) -> Bool {
        var i = 0
        let n = b.count
        let base = UnsafeRawPointer(b.baseAddress)
        while i < n {
            // ASCII fast path: eight bytes at a time while none has its top bit set (text
            // payloads are mostly ASCII; a 16 KiB one was 16 Ki trips through the switch).
            if let base {
                while i + 8 <= n, base.loadUnaligned(fromByteOffset: i, as: UInt64.self) & 0x8080_8080_8080_8080 == 0 {
                    i += 8
                }
                if i >= n { break }
            }
            let c = b[i]
            if c < 0x80 { i += 1; continue }
            let need: Int
            var lower: UInt8 = 0x80, upper: UInt8 = 0xBF
            switch c {
            case 0xC2...0xDF: need = 1
            case 0xE0: need = 2; lower = 0xA0
            case 0xE1...0xEC, 0xEE, 0xEF: need = 2
            case 0xED: need = 2; upper = 0x9F
            case 0xF0: need = 3; lower = 0x90
            case 0xF1...0xF3: need = 3
            case 0xF4: need = 3; upper = 0x8F
            default: return false
            }
            guard i + need < n else { return false }
            guard b[i + 1] >= lower, b[i + 1] <= upper else { return false }
            for k in 2..<(need + 1) where b[i + k] & 0xC0 != 0x80 { return false }
            i += need + 1
        }
        return true
    }
}
