import Testing
import Vocabulary
import WebSocket

@Suite("Incremental UTF-8")
struct UTF8ValidatorTests {
    static let valid = ["", "plain ascii", "κόσμε", "€ and 😀 and 中文", "\u{10FFFF}", "\u{FFFD}\u{D7FF}\u{E000}"]

    @Test("valid text passes split at every byte boundary", arguments: valid)
    func validSplits(text: String) {
        let bytes = Array(text.utf8)
        for cut in 0...bytes.count {
            var validator = UTF8Validator()
            let first = validator.feed(bytes[..<cut])
            let second = validator.feed(bytes[cut...])
            #expect(first && second)
            #expect(validator.isComplete)
        }
        var byteByByte = UTF8Validator()
        var allFed = true
        for byte in bytes { allFed = byteByByte.feed([byte]) && allFed }
        #expect(allFed)
        #expect(byteByByte.isComplete)
    }

    static let invalid: [(String, [UInt8])] = [
        ("lone continuation", [0x80]),
        ("overlong slash", [0xC0, 0xAF]),
        ("overlong 3-byte", [0xE0, 0x80, 0xAF]),
        ("surrogate", [0xED, 0xA0, 0x80]),
        ("above U+10FFFF", [0xF4, 0x90, 0x80, 0x80]),
        ("F5 lead", [0xF5, 0x80, 0x80, 0x80]),
        ("FF", [0xFF]),
        ("missing continuation", [0xE2, 0x82, 0x41]),
        ("Autobahn 6.4.1", [0xCE, 0xBA, 0xE1, 0xBD, 0xB9, 0xCF, 0x83, 0xCE, 0xBC, 0xCE, 0xB5, 0xF4, 0x90, 0x80, 0x80]),
    ]

    @Test("invalid sequences fail fast", arguments: invalid.indices)
    func invalidFails(index: Int) {
        let (name, bytes) = Self.invalid[index]
        var validator = UTF8Validator()
        var ok = true
        for byte in bytes { ok = ok && validator.feed([byte]) }
        #expect(!ok, "\(name)")
        #expect(!validator.isComplete)
        let after = validator.feed(Array("a".utf8))
        #expect(!after, "stays failed")
    }

    @Test("an unfinished character is valid so far but not complete")
    func unfinished() {
        var validator = UTF8Validator()
        let start = validator.feed([0xF0, 0x9F, 0x98])
        #expect(start)
        #expect(!validator.isComplete)
        let end = validator.feed([0x80])
        #expect(end)
        #expect(validator.isComplete)
    }

    @Test("agrees with the standard library on random bytes")
    func randomAgreement() {
        var generator = SeededGenerator(seed: 11)
        for _ in 0..<2000 {
            let count = Int.random(in: 0...12, using: &generator)
            let bytes = (0..<count).map { _ in
                // Bias toward the interesting lead and continuation ranges.
                [UInt8.random(in: 0x80...0xBF, using: &generator), UInt8.random(in: 0xC0...0xFF, using: &generator),
                 UInt8.random(in: 0...0x7F, using: &generator)][Int.random(in: 0...2, using: &generator)]
            }
            var validator = UTF8Validator()
            let ours = validator.feed(bytes) && validator.isComplete
            let standard = String(validating: bytes, as: UTF8.self) != nil
            #expect(ours == standard, "\(bytes)")
        }
    }
}
