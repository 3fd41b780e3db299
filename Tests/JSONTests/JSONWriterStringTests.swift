import JSON
import Testing
import Vocabulary

/// `writeString` finds plain bytes eight at a time and copies runs of them: its output must
/// be what escaping byte by byte gives (the reference below, the rule the function states),
/// for every kind of byte at every place relative to an eight-byte word and to the end.
@Suite struct JSONWriterStringTests {
    /// The rule, one byte at a time: quote, backslash and C0 escaped (`\n`, `\r`, `\t` by
    /// letter), DEL and every other display-unsafe character as `\uHHHH`, the rest as is.
    static func reference(_ s: String) -> [UInt8] {
        var out: [UInt8] = [UInt8(ascii: "\"")]
        for scalar in s.unicodeScalars {
            switch scalar {
            case "\"": out += Array("\\\"".utf8)
            case "\\": out += Array("\\\\".utf8)
            case "\n": out += Array("\\n".utf8)
            case "\r": out += Array("\\r".utf8)
            case "\t": out += Array("\\t".utf8)
            default:
                if scalar.value < 0x20 || scalar.value == 0x7F || DisplayUnsafe.contains(scalar) {
                    let hex = String(scalar.value, radix: 16, uppercase: false)
                    out += Array(("\\u" + String(repeating: "0", count: 4 - hex.count) + hex).utf8)
                } else {
                    out += Array(String(scalar).utf8)
                }
            }
        }
        out.append(UInt8(ascii: "\""))
        return out
    }

    static func written(_ s: String) -> [UInt8] {
        var out: [UInt8] = []
        JSONWriter.writeString(s, into: &out)
        return out
    }

    /// One of each kind: plain ASCII, the escaped ones, DEL, C1 (U+0085), U+061C, a bidi
    /// override (U+202E), harmless characters sharing their lead bytes (U+00E9, U+0627,
    /// U+2014), other non-ASCII (U+00FC is C3, U+4E2D three bytes, U+1F600 four).
    static let samples: [String] = [
        "a", "Z", " ", "~", "\"", "\\", "\n", "\r", "\t", "\u{0}", "\u{1B}", "\u{1F}", "\u{7F}",
        "\u{85}", "\u{9F}", "\u{61C}", "\u{2028}", "\u{202E}", "\u{2066}", "\u{E9}", "\u{627}", "\u{2014}",
        "\u{FC}", "\u{4E2D}", "\u{1F600}",
    ]

    @Test func everyKindOfCharacterAtEveryPlaceOfAWord() {
        for sample in Self.samples {
            for before in 0...17 {
                for after in [0, 1, 7, 8, 9] {
                    let s = String(repeating: "x", count: before) + sample + String(repeating: "y", count: after)
                    #expect(Self.written(s) == Self.reference(s), "\(Array(s.utf8))")
                }
            }
        }
    }

    @Test func mixedStringsMatchTheReference() {
        // A fixed generator: the same strings every run.
        var seed: UInt64 = 0x9E37_79B9_7F4A_7C15
        for _ in 0..<4000 {
            var s = ""
            seed = seed &* 6_364_136_223_846_793_005 &+ 1_442_695_040_888_963_407
            let length = Int(seed >> 58)  // 0 to 63 characters
            for _ in 0..<length {
                seed = seed &* 6_364_136_223_846_793_005 &+ 1_442_695_040_888_963_407
                let pick = Int(seed >> 59)  // 0 to 31
                s += pick < Self.samples.count ? Self.samples[pick] : "plain"
            }
            #expect(Self.written(s) == Self.reference(s), "\(Array(s.utf8))")
        }
    }

    @Test func anEmptyStringIsTwoQuotes() {
        #expect(Self.written("") == Array("\"\"".utf8))
    }
}
