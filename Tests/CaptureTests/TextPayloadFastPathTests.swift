import Capture
import Testing

/// The word-at-a-time paths of frame encoding (the UTF-8 check that picks `text` or `b64`,
/// and the JSON escaping of text payloads) against byte-by-byte references, with the
/// interesting byte at every position around the 8-byte words.
@Suite struct TextPayloadFastPathTests {
    static func frame(_ payload: [UInt8]) -> CaptureRecord {
        .frame(FrameRecord(conn: 1, t: 2, from: .client, opcode: .text, masked: true, payload: payload))
    }

    /// JSON string escaping, one byte at a time, as the format documents it.
    static func referenceEscaped(_ bytes: [UInt8]) -> [UInt8] {
        let hex = Array("0123456789abcdef".utf8)
        var out: [UInt8] = [0x22]
        for byte in bytes {
            switch byte {
            case 0x22: out += [0x5C, 0x22]
            case 0x5C: out += [0x5C, 0x5C]
            case 0x0A: out += [0x5C, UInt8(ascii: "n")]
            case 0x0D: out += [0x5C, UInt8(ascii: "r")]
            case 0x09: out += [0x5C, UInt8(ascii: "t")]
            case ..<0x20: out += [0x5C, UInt8(ascii: "u"), 0x30, 0x30, hex[Int(byte >> 4)], hex[Int(byte & 0xF)]]
            default: out.append(byte)
            }
        }
        return out + [0x22]
    }

    /// Each of `pieces` inserted at every position of runs of `filler` 0 to 40 bytes long,
    /// so a piece lands at every offset of the eight-byte words the fast path reads.
    static func payloads(inserting pieces: [[UInt8]], into filler: UInt8) -> [(payload: [UInt8], place: String)] {
        var out: [(payload: [UInt8], place: String)] = []
        for length in 0...40 {
            for piece in pieces {
                for position in 0...length {
                    var payload = [UInt8](repeating: filler, count: length)
                    payload.insert(contentsOf: piece, at: position)
                    out.append((payload, "length \(length) at \(position)"))
                }
            }
        }
        return out
    }

    static func textField(of line: [UInt8]) -> [UInt8]? {
        let key = Array(#","text":"#.utf8)
        guard let start = (0...(line.count - key.count)).first(where: { Array(line[$0..<($0 + key.count)]) == key }) else { return nil }
        return Array(line[(start + key.count)..<(line.count - 2)])  // up to the closing `}\n`
    }

    @Test func specialBytesAtEveryPositionAreEscapedLikeTheReference() throws {
        let specials: [[UInt8]] = [[0x22], [0x5C], [0x0A], [0x0D], [0x09], [0x00], [0x1F], [0x7F], [0x20], [0xC3, 0xA9], [0xE2, 0x82, 0xAC]]
        for (payload, place) in Self.payloads(inserting: specials, into: UInt8(ascii: "a")) {
            let line = RecordCoding.encode(Self.frame(payload))
            #expect(Self.textField(of: line) == Self.referenceEscaped(payload), "\(place)")
            #expect(try RecordCoding.decode(line) == Self.frame(payload))
        }
    }

    @Test func invalidUTF8AtEveryPositionIsRecordedAsBase64() throws {
        let invalid: [[UInt8]] = [[0xFF], [0x80], [0xC0, 0x80], [0xED, 0xA0, 0x80], [0xF4, 0x90, 0x80, 0x80], [0xC3]]
        for (payload, place) in Self.payloads(inserting: invalid, into: UInt8(ascii: "z")) {
            let line = RecordCoding.encode(Self.frame(payload))
            #expect(Self.textField(of: line) == nil, "\(place)")
            #expect(try RecordCoding.decode(line) == Self.frame(payload))
        }
    }
}
