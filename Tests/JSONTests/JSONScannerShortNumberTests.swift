import JSON
import Testing

/// `shortNumber` must give what `number()` gives, token and index, for every number and
/// every thing after it, near the buffer's end or far from it.
@Suite struct JSONScannerShortNumberTests {
    static func check(_ bytes: [UInt8], _ place: String) {
        bytes.withUnsafeBufferPointer { buffer in
            var long = JSONScanner(buffer), short = JSONScanner(buffer)
            let token = long.number(), quick = short.shortNumber()
            #expect(quick == token, "\(place)")
            #expect(short.index == long.index, "\(place)")
        }
    }

    @Test func everyLengthAndEndingNearAndFarFromTheEnd() {
        let digits = Array("9876543210123456789012345".utf8)
        let heads: [[UInt8]] = [[], Array("-".utf8), Array("0".utf8), Array("1".utf8)]
        let tails = [",", "}", " ", "]", ".5", ".", "e3", "E+2", "e", "x", "\u{E9}", "0", ""].map { Array($0.utf8) }
        for head in heads {
            for length in 0...digits.count {
                for tail in tails {
                    let number = head + Array(digits[..<length]) + tail
                    for room in [0, 1, 5, 20] {
                        let bytes = number + [UInt8](repeating: UInt8(ascii: " "), count: room)
                        Self.check(bytes, "\(String(decoding: number, as: UTF8.self)) + \(room) spaces")
                    }
                }
            }
        }
        // Not a number at all.
        for text in ["", "x", "-", "-x", ".5", "+1"] { Self.check(Array(text.utf8) + Array(repeating: 32, count: 20), text) }
    }
}
