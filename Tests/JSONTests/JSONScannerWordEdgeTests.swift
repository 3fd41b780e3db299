import JSON
import Testing

/// The scanner reads strings eight bytes a load and decodes their text eight bytes a
/// store (in two passes, `string()` then `textBytes`, and in one, `stringWithText`): every byte that ends a plain run (quote, backslash, control byte, non-ASCII
/// character) is put at every offset of those words, at the buffer's end and past it, and
/// the scanner is compared with a byte-by-byte reference of the grammar (RFC 8259 strings,
/// RFC 3629 UTF-8 as Swift's own validation reads it, paired surrogates) and with
/// `JSONParser`.
@Suite struct JSONScannerWordEdgeTests {
    /// A string starting with the quote at `start`, read one byte at a time: where it ends
    /// (after its closing quote) and its text, or nil where the grammar refuses it.
    static func reference(_ bytes: [UInt8], at start: Int) -> (end: Int, text: [UInt8])? {
        var i = start + 1
        var text: [UInt8] = []
        var raw: [UInt8] = []  // the raw bytes since the last escape: UTF-8 on their own
        func flush() -> Bool {
            defer { raw = [] }
            guard String(validating: raw, as: UTF8.self) != nil else { return false }
            text += raw
            return true
        }
        func hex4(_ at: Int) -> UInt32? {
            guard at + 4 <= bytes.count, let text = String(validating: bytes[at..<(at + 4)], as: UTF8.self),
                  text.allSatisfy(\.isHexDigit) else { return nil }
            return UInt32(text, radix: 16)
        }
        while i < bytes.count {
            let byte = bytes[i]
            switch byte {
            case 0x22:
                return flush() ? (i + 1, text) : nil
            case 0x5C:
                guard flush(), i + 1 < bytes.count else { return nil }
                let escape = bytes[i + 1]
                i += 2
                let simple: [UInt8: UInt8] = [0x22: 0x22, 0x5C: 0x5C, 0x2F: 0x2F, 0x62: 0x08, 0x66: 0x0C,
                                              0x6E: 0x0A, 0x72: 0x0D, 0x74: 0x09]
                if let decoded = simple[escape] {
                    text.append(decoded)
                    continue
                }
                guard escape == UInt8(ascii: "u"), var scalar = hex4(i) else { return nil }
                i += 4
                if (0xD800..<0xDC00).contains(scalar) {
                    guard i + 1 < bytes.count, bytes[i] == 0x5C, bytes[i + 1] == UInt8(ascii: "u"),
                          let low = hex4(i + 2), (0xDC00..<0xE000).contains(low) else { return nil }
                    i += 6
                    scalar = 0x10000 + (scalar - 0xD800) * 0x400 + (low - 0xDC00)
                }
                guard let unicode = Unicode.Scalar(scalar) else { return nil }
                text += Array(String(Character(unicode)).utf8)
            case ..<0x20:
                return nil
            default:
                raw.append(byte)
                i += 1
            }
        }
        return nil
    }

    /// The pieces put inside strings: each ends a plain run, or is a place where the
    /// grammar decides.
    static let pieces: [[UInt8]] = [
        [0x5C, 0x22], [0x5C, 0x5C], [0x5C, 0x2F], [0x5C, UInt8(ascii: "n")], [0x5C, UInt8(ascii: "t")],
        Array(#"\u00e9"#.utf8), Array(#"\u20AC"#.utf8), Array(#"\u0000"#.utf8), Array(#"\ud83d\ude00"#.utf8),
        Array(#"\ud83d"#.utf8), Array(#"\ude00"#.utf8), Array(#"\ud83dx"#.utf8), Array(#"\ud83d\u0041"#.utf8),
        Array(#"\x"#.utf8), Array(#"\u12G4"#.utf8), Array(#"\u12"#.utf8), [0x5C],
        [0x00], [0x09], [0x0A], [0x1F], [0x7F], [0x20],
        Array("é".utf8), Array("€".utf8), Array("😀".utf8), Array("é€😀".utf8),
        [0xFF], [0x80], [0xC0, 0xAF], [0xC1, 0xBF], [0xED, 0xA0, 0x80], [0xF4, 0x90, 0x80, 0x80], [0xF5, 0x80, 0x80, 0x80],
        [0xE2, 0x82], [0xF0, 0x9F, 0x98], [0xC3], [0xE2, 0x5C, 0x6E], [0xC3, 0x22],
        [0x22],
    ]

    /// `"` + filler with `piece` at `position` + `"`, then `after`.
    static func line(length: Int, piece: [UInt8], at position: Int, after: [UInt8]) -> [UInt8] {
        var content = [UInt8](repeating: UInt8(ascii: "a"), count: length)
        content.insert(contentsOf: piece, at: position)
        return [0x22] + content + [0x22] + after
    }

    /// What every way of scanning a string must give: a refusal exactly where the reference
    /// refuses, else its end (`index`), the content between the quotes, its text and flags.
    static func expect(_ token: JSONScanner.StringToken?, text: [UInt8]?, index: Int, in bytes: [UInt8],
                       like expected: (end: Int, text: [UInt8])?, _ place: String) {
        #expect((token == nil) == (expected == nil), "\(place): \(token == nil ? "refuses" : "accepts")")
        guard let token, let expected else { return }
        #expect(index == expected.end, "\(place)")
        #expect(token.content == 1..<(expected.end - 1), "\(place)")
        #expect(text == expected.text, "\(place)")
        let raw = bytes[token.content]
        #expect(token.escaped == raw.contains(0x5C), "\(place)")
        #expect(token.isASCII == raw.allSatisfy { $0 < 0x80 }, "\(place)")
    }

    static func check(_ bytes: [UInt8], place: String) {
        let expected = reference(bytes, at: 0)
        bytes.withUnsafeBufferPointer { buffer in
            var scanner = JSONScanner(buffer)
            let token = scanner.string()
            Self.expect(token, text: token.map(scanner.textBytes), index: scanner.index, in: bytes, like: expected,
                        "\(place): scanner")
            if let token, let expected {
                #expect(scanner.text(token) == String(decoding: expected.text, as: UTF8.self), "\(place)")
            }
        }
        // The inlined short path (`shortString`) gives what `string()` gives, short or not.
        bytes.withUnsafeBufferPointer { buffer in
            var long = JSONScanner(buffer), short = JSONScanner(buffer)
            let token = long.string(), quick = short.shortString()
            #expect(quick == token, "\(place): short path")
            if token != nil { #expect(short.index == long.index, "\(place): short path") }
        }
        // The one-pass scan (`stringWithText`) refuses, ends and decodes exactly alike.
        bytes.withUnsafeBufferPointer { buffer in
            var scanner = JSONScanner(buffer)
            let scanned = scanner.stringWithText()
            Self.expect(scanned?.token, text: scanned?.text, index: scanner.index, in: bytes, like: expected,
                        "\(place): one pass")
        }
        // The parser reads strings with the scanner; a whole-text string must agree too.
        if bytes.last == 0x22, let parsed = try? JSONParser.parse(bytes) {
            #expect(expected.map { parsed == .string(String(decoding: $0.text, as: UTF8.self)) } == true, "\(place)")
        }
    }

    @Test func everyPieceAtEveryOffsetOfTwoWords() {
        for length in 0...17 {
            for piece in Self.pieces {
                for position in 0...length {
                    for after in [[], [0x2C], Array(" , \"next\"".utf8)] as [[UInt8]] {
                        let place = "length \(length), piece \(piece) at \(position), \(after.count) bytes after"
                        Self.check(Self.line(length: length, piece: piece, at: position, after: after), place: place)
                    }
                }
            }
        }
    }

    /// Without its closing quote the string runs into the buffer's end, wherever the
    /// piece lies; nothing may be read past it.
    @Test func aStringCutShortIsRefusedAtEveryLength() {
        for length in 0...17 {
            for piece in Self.pieces where piece != [0x22] {
                for position in 0...length {
                    var bytes = Self.line(length: length, piece: piece, at: position, after: [])
                    bytes.removeLast()
                    Self.check(bytes, place: "cut: length \(length), piece \(piece) at \(position)")
                    // The buffer ends inside an escape or a character, too.
                    for cut in 1..<bytes.count {
                        Self.check(Array(bytes[..<cut]), place: "cut at \(cut): length \(length), piece \(piece) at \(position)")
                    }
                }
            }
        }
    }

    /// Runs of escapes and characters back to back, so that decoding crosses words with a
    /// backslash or a multi-byte character at every offset.
    @Test func denseEscapesAndCharactersDecodeLikeTheReference() {
        let inner = #"{\"event\":\"bird:subscribe\",\"data\":{\"channel\":\"caf\u00e9-\ud83d\ude00\"}}"#
        for prefix in 0...9 {
            let text = String(repeating: "x", count: prefix) + inner + "é" + String(repeating: "\\n", count: prefix)
            Self.check(Array("\"\(text)\"".utf8), place: "prefix \(prefix)")
        }
    }
}
