import JSON
import Testing

/// Integers of up to 18 digits are read straight from the bytes; longer ones go through
/// `Int64(String)` (or `Double` beyond Int64). Both must give what `Int64(_:)` gives.
@Suite struct IntegerFastPathTests {
    @Test(arguments: ["0", "-0", "7", "-7", "10", "999999999999999999", "-999999999999999999",
                      "1000000000000000000", "-1000000000000000000", "9223372036854775807",
                      "-9223372036854775808", "1767225600000000", "46035658"])
    func integersMatchInt64Parsing(_ text: String) throws {
        #expect(try JSONParser.parse(text) == .int(try #require(Int64(text))))
        #expect(try JSONParser.parse("[\(text),\(text)]") == .array([.int(Int64(text)!), .int(Int64(text)!)]))
        #expect(try JSONParser.parse(#"{"t":\#(text)}"#)["t"] == .int(Int64(text)!))
    }

    @Test func beyondInt64IsADouble() throws {
        for text in ["-9223372036854775809", "12345678901234567890"] {
            #expect(try JSONParser.parse(text) == .double(try #require(Double(text))))
        }
    }

    @Test func objectsWithManyKeysKeepThemAll() throws {
        let keys = (0..<20).map { "k\($0)" }
        let text = "{" + keys.enumerated().map { #""\#($1)":\#($0)"# }.joined(separator: ",") + "}"
        let object = try #require(try JSONParser.parse(text).objectValue)
        #expect(object.keys == keys)
        #expect(object["k19"] == 19)
    }
}
