import JSON
import Testing

@Suite struct JSONParserTests {
    @Test("scalars", arguments: [
        ("null", JSONValue.null), ("true", .bool(true)), ("false", .bool(false)),
        ("0", .int(0)), ("-0", .int(0)), ("42", .int(42)), ("-17", .int(-17)),
        ("9223372036854775807", .int(.max)), ("-9223372036854775808", .int(.min)),
        ("1.5", .double(1.5)), ("-2.25e2", .double(-225)), ("1E3", .double(1000)), ("1e-2", .double(0.01)),
        ("9223372036854775808", .double(9_223_372_036_854_775_808)),
        (#""a""#, .string("a")), ("  7 \n", .int(7)),
    ])
    func scalars(_ text: String, _ expected: JSONValue) throws {
        #expect(try JSONParser.parse(text) == expected)
    }

    @Test func objectsKeepKeyOrder() throws {
        let value = try JSONParser.parse(#"{"z":1,"a":[true,null,{"k":"v"}],"m":{}}"#)
        #expect(value.objectValue?.keys == ["z", "a", "m"])
        #expect(value["a"]?.arrayValue?[2]["k"] == "v")
        #expect(value["m"] == .object(JSONObject()))
    }

    @Test("escapes", arguments: [
        (#""\"\\\/\b\f\n\r\t""#, "\"\\/\u{8}\u{C}\n\r\t"),
        (#""\u0041\u00e9\u20AC""#, "Aé€"),
        (#""\ud83d\ude00""#, "😀"),
        (#""\u0000""#, "\u{0}"),
        (#""é😀 raw""#, "é😀 raw"),
    ])
    func escapes(_ text: String, _ expected: String) throws {
        #expect(try JSONParser.parse(text) == .string(expected))
    }

    @Test("errors carry the offset and the reason", arguments: [
        ("", 0, "unexpected end of input"),
        ("[1,]", 3, "unexpected character ']'"),
        (#"{"a" 1}"#, 5, "expected ':' after key"),
        (#"{"a":1,}"#, 7, "expected a string key"),
        ("[1 2]", 3, "expected ',' or ']' in array"),
        ("01", 1, "unexpected data after the JSON value"),
        ("1.", 2, "expected a digit after '.'"),
        ("1e", 2, "expected a digit in exponent"),
        ("-", 1, "expected a digit"),
        ("tru", 0, "unexpected end of input"),
        ("nul!", 0, "invalid literal, expected null"),
        (#""abc"#, 4, "unterminated string"),
        (#""\x""#, 3, "invalid escape '\\x'"),
        (#""\ud83d""#, 7, "unpaired surrogate in \\u escape"),
        (#""\ude00""#, 7, "unpaired surrogate in \\u escape"),
        (#""\ud83d\u0041""#, 13, "invalid low surrogate in \\u escape"),
        (#""\u12G4""#, 5, "invalid hex digit in \\u escape"),
        ("\"a\u{1}\"", 2, "control character in string"),
        ("[1] x", 4, "unexpected data after the JSON value"),
        ("1e999", 0, "number out of range (beyond ±1.8e308)"),
        ("[0, -67108E864]", 4, "number out of range (beyond ±1.8e308)"),
        ("1" + String(repeating: "0", count: 309), 0, "number out of range (beyond ±1.8e308)"),
    ])
    func errors(_ text: String, _ offset: Int, _ reason: String) {
        expectError(offset, reason) { try JSONParser.parse(text) }
    }

    @Test func invalidUTF8InAStringIsRejected() {
        #expect(throws: JSONParseError.self) { try JSONParser.parse([0x22, 0xC3, 0x28, 0x22]) }
    }

    @Test func depthLimit() throws {
        let ok = String(repeating: "[", count: JSONParser.maxDepth) + String(repeating: "]", count: JSONParser.maxDepth)
        #expect(throws: Never.self) { try JSONParser.parse(ok) }
        let deep = String(repeating: "[", count: JSONParser.maxDepth + 1) + String(repeating: "]", count: JSONParser.maxDepth + 1)
        expectError(JSONParser.maxDepth, "nesting deeper than \(JSONParser.maxDepth)") { try JSONParser.parse(deep) }
        // Hostile input far past the limit fails cleanly instead of exhausting the stack.
        #expect(throws: JSONParseError.self) { try JSONParser.parse(String(repeating: "{\"a\":", count: 100_000)) }
    }
}

/// Expects `body` to throw a JSONParseError at `offset` with `reason`.
func expectError(_ offset: Int, _ reason: String, sourceLocation: SourceLocation = #_sourceLocation,
                 _ body: () throws -> JSONValue) {
    do {
        let value = try body()
        Issue.record("parsed as \(value), expected an error at \(offset): \(reason)", sourceLocation: sourceLocation)
    } catch let error as JSONParseError {
        #expect(error.offset == offset, sourceLocation: sourceLocation)
        #expect(error.reason == reason, sourceLocation: sourceLocation)
        #expect(error.description == "offset \(offset): \(reason)", sourceLocation: sourceLocation)
    } catch {
        Issue.record("unexpected error \(error)", sourceLocation: sourceLocation)
    }
}

@Suite struct JSONWriterTests {
    @Test func compactAndOrdered() {
        let value: JSONValue = ["b": 1, "a": [true, false, nil], "c": ["x": "y"], "d": 1.5, "e": -3]
        #expect(JSONWriter.serialize(value) == #"{"b":1,"a":[true,false,null],"c":{"x":"y"},"d":1.5,"e":-3}"#)
    }

    @Test func escapesWhatMustBeEscaped() {
        let text = "q\" b\\ n\n r\r t\t nul\u{0} us\u{1F} é😀 /"
        #expect(JSONWriter.serialize(.string(text)) == #""q\" b\\ n\n r\r t\t nul\u0000 us\u001f é😀 /""#)
    }

    @Test func doubles() {
        #expect(JSONWriter.serialize(.double(2)) == "2")
        #expect(JSONWriter.serialize(.double(0.1)) == "0.1")
        #expect(JSONWriter.serialize(.double(.nan)) == "null")
        #expect(JSONWriter.serialize(.double(.infinity)) == "null")
        #expect(JSONWriter.serialize(.double(1e300)) == "1e+300")
    }

    /// The largest and smallest doubles are in range; what underflows reads as zero.
    @Test func numbersAtTheEdgeOfTheRangeAreRead() throws {
        #expect(try JSONParser.parse("1.7976931348623157e308") == .double(.greatestFiniteMagnitude))
        #expect(try JSONParser.parse("-1e-999") == .double(-0.0))
    }

    /// One number type: how a number is spelled does not change what it equals or hashes to.
    @Test func anIntegralDoubleEqualsTheInteger() throws {
        #expect(try JSONParser.parse("10.000") == .int(10))
        #expect(try JSONParser.parse("[1e1]") == [10])
        #expect(JSONValue.double(10).hashValue == JSONValue.int(10).hashValue)
        #expect(Set<JSONValue>([.int(10), .double(10), .double(10.5)]).count == 2)
        #expect(JSONValue.double(0.5) != .int(0))
        // 2^53 + 1 rounds to 2^53 as a double: equal only when exact.
        #expect(JSONValue.int(9_007_199_254_740_993) != .double(9_007_199_254_740_992))
        #expect(JSONValue.int(9_007_199_254_740_992) == .double(9_007_199_254_740_992))
        #expect(JSONValue.double(1e19) != .int(.max))
        #expect(JSONValue.string("10") != .int(10))
    }

    @Test("round trip through text", arguments: [
        JSONValue.string("\u{0}\u{7F}\u{80}\u{FFFF}\u{10FFFF}\"\\"),
        ["nested": [[["deep": [1, 2.5, "x", nil, true]]]]],
        .int(.min), .int(.max), .double(-0.000123), .double(123456.789),
        .double(10), .double(-0.0), .double(1e15), .double(1e300),
    ])
    func roundTrip(_ value: JSONValue) throws {
        #expect(try JSONParser.parse(JSONWriter.serialize(value)) == value)
    }
}
