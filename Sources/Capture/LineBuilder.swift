import JSON
import Vocabulary

/// Appends the pieces of one JSON object line straight into a byte buffer: no JSONValue,
/// no intermediate String per field. The encoder calls these in key order; the builder
/// only tracks whether a comma is needed.
struct LineBuilder {
    var bytes: [UInt8]
    private var first = true

    /// Takes over `out`'s storage (leaving it empty) so appending never copies it.
    init(taking out: inout [UInt8]) {
        bytes = []
        swap(&bytes, &out)
        bytes.append(UInt8(ascii: "{"))
    }

    /// `"name":` with a leading comma when needed. Keys are plain ASCII, never escaped.
    mutating func key(_ name: StaticString) {
        if first { first = false } else { bytes.append(UInt8(ascii: ",")) }
        bytes.append(UInt8(ascii: "\""))
        bytes.append(contentsOf: UnsafeBufferPointer(start: name.utf8Start, count: name.utf8CodeUnitCount))
        bytes.append(UInt8(ascii: "\""))
        bytes.append(UInt8(ascii: ":"))
    }

    mutating func field(_ name: StaticString, _ value: Int64) {
        key(name)
        Self.appendInt(value, to: &bytes)
    }

    mutating func field(_ name: StaticString, _ value: Int) { field(name, Int64(value)) }

    mutating func field(_ name: StaticString, _ value: Bool) {
        key(name)
        if value {
            bytes.append(contentsOf: [0x74, 0x72, 0x75, 0x65])  // true
        } else {
            bytes.append(contentsOf: [0x66, 0x61, 0x6C, 0x73, 0x65])  // false
        }
    }

    mutating func field(_ name: StaticString, _ value: String) {
        key(name)
        JSONWriter.writeString(value, into: &bytes)
    }

    mutating func field(_ name: StaticString, _ value: JSONValue) {
        key(name)
        JSONWriter.write(value, into: &bytes)
    }

    /// A string field from bytes already known to be valid UTF-8 (a text payload).
    mutating func field(_ name: StaticString, utf8 value: [UInt8]) {
        key(name)
        reserve(value.count + 4)
        Self.appendEscaped(value, to: &bytes)
    }

    mutating func field(_ name: StaticString, base64 value: [UInt8]) {
        key(name)
        reserve(Base64.encodedCount(value.count) + 4)
        bytes.append(UInt8(ascii: "\""))
        Base64.encode(value, into: &bytes)
        bytes.append(UInt8(ascii: "\""))
    }

    /// Makes room for `extra` more bytes in one step before a large field (a payload), so
    /// the line is not copied once per doubling. Grows at least geometrically: `bytes` may
    /// be a long-lived buffer, and reserving exactly would reallocate on every line.
    private mutating func reserve(_ extra: Int) {
        let needed = bytes.count + extra
        if needed > bytes.capacity { bytes.reserveCapacity(Swift.max(needed, 2 * bytes.capacity)) }
    }

    /// Closes the object and ends the line.
    mutating func finish() -> [UInt8] {
        bytes.append(UInt8(ascii: "}"))
        bytes.append(0x0A)
        return bytes
    }

    static func appendInt(_ value: Int64, to out: inout [UInt8]) {
        if value == 0 { out.append(UInt8(ascii: "0")); return }
        var magnitude = value.magnitude
        if value < 0 { out.append(UInt8(ascii: "-")) }
        var digits: (UInt8, UInt8, UInt8, UInt8, UInt8, UInt8, UInt8, UInt8, UInt8, UInt8,
                     UInt8, UInt8, UInt8, UInt8, UInt8, UInt8, UInt8, UInt8, UInt8, UInt8) =
            (0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0)
        var count = 0
        withUnsafeMutableBytes(of: &digits) { buffer in
            while magnitude > 0 {
                buffer[count] = UInt8(ascii: "0") + UInt8(magnitude % 10)
                magnitude /= 10
                count += 1
            }
            for i in stride(from: count - 1, through: 0, by: -1) { out.append(buffer[i]) }
        }
    }

    /// Whether any of the eight bytes of `word` is below 0x20, a quote or a backslash.
    /// Exact (no false negatives, no false positives for the word as a whole): `x - 0x01..`
    /// borrows into a byte's top bit only from a zero byte or a lower borrowing byte, and
    /// the lowest flagged byte is always a true match.
    @inline(__always)
    static func needsEscape(_ word: UInt64) -> Bool {
        let ones: UInt64 = 0x0101_0101_0101_0101
        let high: UInt64 = 0x8080_8080_8080_8080
        func hasZero(_ x: UInt64) -> Bool { (x &- ones) & ~x & high != 0 }
        let control = (word &- 0x20 &* ones) & ~word & high != 0   // some byte < 0x20
        return control || hasZero(word ^ (0x22 &* ones)) || hasZero(word ^ (0x5C &* ones))
    }

    private static let hex: [UInt8] = Array("0123456789abcdef".utf8)

    /// A JSON string from valid UTF-8 bytes: quotes, backslashes and control characters
    /// escaped, everything else copied as is (runs of plain bytes copied in one go).
    static func appendEscaped(_ value: [UInt8], to out: inout [UInt8]) {
        out.append(UInt8(ascii: "\""))
        value.withUnsafeBufferPointer { input in
            var runStart = 0
            var i = 0
            let n = input.count
            let base = UnsafeRawPointer(input.baseAddress)
            while i < n {
                // Eight bytes at a time while none needs escaping (the common case).
                if let base {
                    while i + 8 <= n, !needsEscape(base.loadUnaligned(fromByteOffset: i, as: UInt64.self)) { i += 8 }
                    if i >= n { break }
                }
                let byte = input[i]
                i += 1
                guard byte < 0x20 || byte == 0x22 || byte == 0x5C else { continue }
                if runStart < i - 1 { out.append(contentsOf: UnsafeBufferPointer(rebasing: input[runStart..<(i - 1)])) }
                runStart = i
                switch byte {
                case 0x22: out.append(contentsOf: [0x5C, 0x22])
                case 0x5C: out.append(contentsOf: [0x5C, 0x5C])
                case 0x0A: out.append(contentsOf: [0x5C, UInt8(ascii: "n")])
                case 0x0D: out.append(contentsOf: [0x5C, UInt8(ascii: "r")])
                case 0x09: out.append(contentsOf: [0x5C, UInt8(ascii: "t")])
                default:
                    out.append(contentsOf: [0x5C, UInt8(ascii: "u"), UInt8(ascii: "0"), UInt8(ascii: "0"),
                                            hex[Int(byte >> 4)], hex[Int(byte & 0xF)]])
                }
            }
            if runStart < input.count { out.append(contentsOf: UnsafeBufferPointer(rebasing: input[runStart...])) }
        }
        out.append(UInt8(ascii: "\""))
    }
}
