import JSON
import Testing

/// `literal` compares four bytes a load: it must step over exactly the word spelt out at
/// the index, wherever the buffer ends and whichever byte differs.
@Suite struct JSONScannerLiteralTests {
    static let words: [StaticString] = ["true", "false", "null"]

    /// The rule, byte by byte.
    static func spelled(_ word: StaticString, in bytes: [UInt8], at index: Int) -> Bool {
        let spelling = Array(word.description.utf8)
        return index + spelling.count <= bytes.count && Array(bytes[index..<(index + spelling.count)]) == spelling
    }

    static func check(_ bytes: [UInt8], at index: Int, _ place: String) {
        for word in Self.words {
            bytes.withUnsafeBufferPointer { buffer in
                var scanner = JSONScanner(buffer, at: index)
                let expected = Self.spelled(word, in: bytes, at: index)
                #expect(scanner.literal(word) == expected, "\(place): \(word)")
                #expect(scanner.index == (expected ? index + word.utf8CodeUnitCount : index), "\(place): \(word)")
            }
        }
    }

    @Test func everyWordCutShortOrChangedAnywhere() {
        for word in Self.words {
            let spelling = Array(word.description.utf8)
            for before in 0...3 {
                for after in ["", ",", "}", "x"] {
                    let whole = [UInt8](repeating: UInt8(ascii: " "), count: before) + spelling + Array(after.utf8)
                    Self.check(whole, at: before, "\(word) after \(before), then \(after)")
                    // Cut short at every length: the load must not read past the end.
                    for cut in before..<whole.count { Self.check(Array(whole[..<cut]), at: before, "\(word) cut at \(cut)") }
                    // One byte changed at every place (case, a neighbour, a high byte).
                    for k in spelling.indices {
                        for replacement: UInt8 in [spelling[k] ^ 0x20, spelling[k] &+ 1, 0xFF] {
                            var changed = whole
                            changed[before + k] = replacement
                            Self.check(changed, at: before, "\(word) byte \(k) as \(replacement)")
                        }
                    }
                }
            }
        }
    }
}
