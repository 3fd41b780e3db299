import Vocabulary

/// Serializes JSON values compactly (no spaces), keys in their stored order. Appends to a
/// byte buffer so a writer can build a whole line without intermediate strings.
public enum JSONWriter {
    public static func serialize(_ value: JSONValue) -> String {
        var bytes: [UInt8] = []
        bytes.reserveCapacity(128)
        write(value, into: &bytes)
        return String(decoding: bytes, as: UTF8.self)
    }

    public static func write(_ value: JSONValue, into out: inout [UInt8]) {
        switch value {
        case .null: out.append(contentsOf: "null".utf8)
        case .bool(let b): out.append(contentsOf: (b ? "true" : "false").utf8)
        case .int(let i): out.append(contentsOf: String(i).utf8)
        case .double(let d): writeDouble(d, into: &out)
        case .string(let s): writeString(s, into: &out)
        case .array(let elements):
            out.append(UInt8(ascii: "["))
            for (i, element) in elements.enumerated() {
                if i > 0 { out.append(UInt8(ascii: ",")) }
                write(element, into: &out)
            }
            out.append(UInt8(ascii: "]"))
        case .object(let object):
            out.append(UInt8(ascii: "{"))
            for (i, member) in object.members.enumerated() {
                if i > 0 { out.append(UInt8(ascii: ",")) }
                writeString(member.key, into: &out)
                out.append(UInt8(ascii: ":"))
                write(member.value, into: &out)
            }
            out.append(UInt8(ascii: "}"))
        }
    }

    /// Non-finite doubles have no JSON spelling; they are written as null.
    public static func writeDouble(_ d: Double, into out: inout [UInt8]) {
        guard d.isFinite else { out.append(contentsOf: "null".utf8); return }
        if d.rounded() == d, abs(d) < 1e15 {
            out.append(contentsOf: String(Int64(d)).utf8)
        } else {
            out.append(contentsOf: "\(d)".utf8)
        }
    }

    private static let hexDigits = Array("0123456789abcdef".utf8)

    /// `s` as a JSON string literal. Besides what JSON requires (quote, backslash, C0), DEL
    /// and every other `DisplayUnsafe` character is written as `\\uHHHH`: JSON output is read
    /// on terminals (`frames --format json`, `ctl --json`, `jq`) and embedded in HTML, and a
    /// raw C1 CSI or bidi override there acts on the screen. The text decodes unchanged.
    ///
    /// Plain bytes (nearly all of a report's) are found eight at a time and written a run at
    /// a time: appended byte by byte, each paid the array's capacity and uniqueness checks,
    /// and the loop was 2.7% of `analyze --format json`'s instructions on a capture of
    /// 2,000 clients.
    public static func writeString(_ s: String, into out: inout [UInt8]) {
        out.append(UInt8(ascii: "\""))
        var text = s
        text.withUTF8 { bytes in
            guard let base = bytes.baseAddress else { return }
            let count = bytes.count
            var i = 0
            var written = 0  // bytes before this are in `out`
            while i < count {
                if i &+ 8 <= count, unsafeBytes(UnsafeRawPointer(base + i).loadUnaligned(as: UInt64.self)) == 0 {
                    i &+= 8
                    continue
                }
                let byte = base[i]
                if byte >= 0x20, byte < 0x7F, byte != UInt8(ascii: "\""), byte != UInt8(ascii: "\\") {
                    i &+= 1
                    continue
                }
                if byte >= 0x80, byte != 0xC2, byte != 0xD8, byte != 0xE2 {
                    i &+= 1
                    continue
                }
                if written < i { out.append(contentsOf: UnsafeBufferPointer(start: base + written, count: i &- written)) }
                switch byte {
                case UInt8(ascii: "\""): out.append(contentsOf: [0x5C, 0x22])
                case UInt8(ascii: "\\"): out.append(contentsOf: [0x5C, 0x5C])
                case 0x0A: out.append(contentsOf: [0x5C, UInt8(ascii: "n")])
                case 0x0D: out.append(contentsOf: [0x5C, UInt8(ascii: "r")])
                case 0x09: out.append(contentsOf: [0x5C, UInt8(ascii: "t")])
                case 0..<0x20, 0x7F: writeEscape(UInt32(byte), into: &out)
                default:
                    // 0xC2, 0xD8, 0xE2: the lead bytes of every display-unsafe character past
                    // ASCII (U+0080 to U+009F, U+061C, U+200E to U+2069): decoded to see
                    // whether it is one.
                    let length = byte == 0xE2 ? 3 : 2
                    guard i &+ length <= count else {
                        out.append(byte)
                        break
                    }
                    let scalar = length == 2
                        ? (UInt32(byte & 0x1F) << 6) | UInt32(base[i &+ 1] & 0x3F)
                        : (UInt32(byte & 0x0F) << 12) | (UInt32(base[i &+ 1] & 0x3F) << 6) | UInt32(base[i &+ 2] & 0x3F)
                    if let unicode = Unicode.Scalar(scalar), DisplayUnsafe.contains(unicode) {
                        writeEscape(scalar, into: &out)
                    } else {
                        out.append(contentsOf: UnsafeBufferPointer(start: base + i, count: length))
                    }
                    i &+= length
                    written = i
                    continue
                }
                i &+= 1
                written = i
            }
            if written < count { out.append(contentsOf: UnsafeBufferPointer(start: base + written, count: count &- written)) }
        }
        out.append(UInt8(ascii: "\""))
    }

    /// The bytes of `word` that `writeString` does not copy as they are (or must look at:
    /// quote, backslash, C0, DEL and every byte from 0x80), as their high bits; zero when
    /// all eight are plain. As `JSONScanner.specialBytes`, with DEL flagged too; the lowest
    /// flag is always a real one, and a false one above it only sends a plain byte to the
    /// byte-by-byte test.
    @inline(__always) static func unsafeBytes(_ word: UInt64) -> UInt64 {
        let ones: UInt64 = 0x0101_0101_0101_0101, highs: UInt64 = 0x8080_8080_8080_8080
        let delete = word ^ 0x7F7F_7F7F_7F7F_7F7F
        return JSONScanner.specialBytes(word) | ((delete &- ones) & ~delete & highs)
    }

    /// `\uHHHH` for a character of the Basic Multilingual Plane.
    private static func writeEscape(_ value: UInt32, into out: inout [UInt8]) {
        out.append(contentsOf: [0x5C, UInt8(ascii: "u")])
        for shift in stride(from: 12, through: 0, by: -4) { out.append(hexDigits[Int((value >> UInt32(shift)) & 0xF)]) }
    }
}

extension JSONValue: CustomStringConvertible {
    /// The compact JSON text of the value.
    public var description: String { JSONWriter.serialize(self) }
}
