import JSON
import Testing

/// The scanner must accept exactly what `JSONParser` accepts, and its tokens must read as
/// the parser's values: strings with the same text, integers with the same value.
@Suite struct JSONScannerTests {
    static let texts: [String] = [
        #"{"a":1,"b":[true,false,null],"c":{"d":"e"}}"#, " [ ] ", "{}", "\"x\"", "-0", "0", "01", "-", "1.", "1.5e",
        "1e999", "-2.5E+400", "1e-999", "1.7976931348623157e308", "9223372036854775807", "9223372036854775808",
        "-9223372036854775808", "-9223372036854775809", "123456789012345678", "1234567890123456789",
        // Around the eighteen digits summed unchecked, and the nineteen checked.
        "999999999999999999", "-999999999999999999", "1000000000000000000", "-1000000000000000000",
        "9999999999999999999", "-9999999999999999999", "10000000000000000000", "-0.5", "-0e1", "0.0",
        #""\"\\\/\b\f\n\r\t\u0000\u00e9\u20AC\ud83d\ude00""#, #""\ud83d""#, #""\ude00""#, #""\ud83d\u0041""#,
        #""\x""#, #""\u12G4""#, #""\u12""#, "\"a\u{1}b\"", "\"caf\u{e9}\"", #"{"a":1,}"#, #"[1,]"#, #"{"a" 1}"#,
        "tru", "nul", "true false", #"{"a":"b"} x"#, "\"unterminated", "[[[[]]]]",
        String(repeating: "[", count: 256) + String(repeating: "]", count: 256),
        String(repeating: "[", count: 255) + String(repeating: "]", count: 255),
        "1\(String(repeating: "0", count: 309))", "1\(String(repeating: "0", count: 308))",
    ]

    @Test(arguments: texts)
    func acceptsWhatTheParserAccepts(_ text: String) {
        let bytes = Array(text.utf8)
        let parsed = try? JSONParser.parse(bytes)
        #expect(bytes.withUnsafeBufferPointer { JSONScanner.isValid($0) } == (parsed != nil), "\(text)")
        // A whole-text string or number reads as the parser's value.
        bytes.withUnsafeBufferPointer { buffer in
            var scanner = JSONScanner(buffer)
            scanner.skipWhitespace()
            if scanner.current == UInt8(ascii: "\""), let token = scanner.string(), scanner.isAtEndAfterWhitespace() {
                #expect(parsed == .string(scanner.text(token)), "\(text)")
                #expect(Array(scanner.text(token).utf8) == scanner.textBytes(token))
            }
            scanner = JSONScanner(buffer)
            if scanner.current.map({ $0 == UInt8(ascii: "-") || ($0 >= 0x30 && $0 <= 0x39) }) == true,
               let number = scanner.number(), scanner.isAtEndAfterWhitespace() {
                if let integer = number.integer {
                    #expect(parsed == .int(integer), "\(text)")
                } else if case .int? = parsed {
                    Issue.record("\(text): the parser read an integer the scanner did not")
                }
            }
        }
    }

    @Test func invalidUTF8IsRefused() {
        for bad: [UInt8] in [[0xC3], [0xC0, 0xAF], [0xED, 0xA0, 0x80], [0xF4, 0x90, 0x80, 0x80], [0x80],
                             [0xE2, 0x82] + Array(#"\u00ac"#.utf8)] {
            let bytes = [0x22] + bad + [0x22]
            #expect(!bytes.withUnsafeBufferPointer { JSONScanner.isValid($0) })
            #expect(throws: JSONParseError.self) { try JSONParser.parse(bytes) }
        }
        // Long plain runs (the eight-byte skip) around multi-byte text and escapes.
        let good = Array("\"\(String(repeating: "abcdefgh", count: 5))€\\n\(String(repeating: "é", count: 9))😀\"".utf8)
        good.withUnsafeBufferPointer { buffer in
            var scanner = JSONScanner(buffer)
            let token = scanner.string()
            #expect(token != nil)
            #expect(token.map { .string(scanner.text($0)) } == (try? JSONParser.parse(good)))
            #expect(token?.escaped == true && token?.isASCII == false)
        }
    }

    @Test func matchesComparesPlainNamesOnly() {
        let bytes = Array(#"["event","ev\u0065nt","even"]"#.utf8)
        bytes.withUnsafeBufferPointer { buffer in
            var scanner = JSONScanner(buffer, at: 1)
            let plain = scanner.string()!
            _ = scanner.consume(UInt8(ascii: ","))
            let escaped = scanner.string()!
            _ = scanner.consume(UInt8(ascii: ","))
            let shorter = scanner.string()!
            #expect(scanner.matches(plain, "event"))
            #expect(!scanner.matches(escaped, "event"))
            #expect(scanner.text(escaped) == "event")
            #expect(!scanner.matches(shorter, "event"))
        }
    }
}
