/// Why a JSON text could not be parsed, and at which byte.
public struct JSONParseError: Error, Sendable, Equatable, CustomStringConvertible {
    public var offset: Int
    public var reason: String
    public var description: String { "offset \(offset): \(reason)" }
}

/// A strict RFC 8259 parser working on bytes. One pass, no intermediate tokens, a depth
/// limit so hostile input cannot exhaust the stack.
public struct JSONParser {
    public static let maxDepth = 256

    /// Parses one complete JSON text; anything but white space after it is an error.
    public static func parse<Bytes: Collection>(_ bytes: Bytes) throws(JSONParseError) -> JSONValue
    where Bytes.Element == UInt8 {
        let result: Result<JSONValue, JSONParseError>? = bytes.withContiguousStorageIfAvailable { buffer in
            Result { () throws(JSONParseError) -> JSONValue in try parse(buffer: buffer) }
        }
        if let result { return try result.get() }
        return try parse(Array(bytes))
    }

    public static func parse(_ text: String) throws(JSONParseError) -> JSONValue {
        var text = text
        return try text.withUTF8 { buffer in
            Result { () throws(JSONParseError) -> JSONValue in try parse(buffer: buffer) }
        }.get()
    }

    static func parse(buffer: UnsafeBufferPointer<UInt8>) throws(JSONParseError) -> JSONValue {
        var parser = JSONParser(buffer: buffer)
        parser.skipWhitespace()
        let value = try parser.parseValue(depth: 0)
        parser.skipWhitespace()
        if parser.index != buffer.count { throw parser.error("unexpected data after the JSON value") }
        return value
    }

    private let buffer: UnsafeBufferPointer<UInt8>
    private var index = 0

    private init(buffer: UnsafeBufferPointer<UInt8>) { self.buffer = buffer }

    private func error(_ reason: String) -> JSONParseError { JSONParseError(offset: index, reason: reason) }

    private mutating func skipWhitespace() { index = JSONParser.whitespaceEnd(buffer, from: index) }

    private mutating func parseValue(depth: Int) throws(JSONParseError) -> JSONValue {
        guard index < buffer.count else { throw error("unexpected end of input") }
        guard depth < JSONParser.maxDepth else { throw error("nesting deeper than \(JSONParser.maxDepth)") }
        switch buffer[index] {
        case UInt8(ascii: "{"): return try parseObject(depth: depth)
        case UInt8(ascii: "["): return try parseArray(depth: depth)
        case UInt8(ascii: "\""): return .string(try parseString())
        case UInt8(ascii: "t"): try expectLiteral("true"); return .bool(true)
        case UInt8(ascii: "f"): try expectLiteral("false"); return .bool(false)
        case UInt8(ascii: "n"): try expectLiteral("null"); return .null
        case UInt8(ascii: "-"), UInt8(ascii: "0")...UInt8(ascii: "9"): return try parseNumber()
        default: throw error("unexpected character '\(Character(Unicode.Scalar(buffer[index])))'")
        }
    }

    private mutating func expectLiteral(_ literal: StaticString) throws(JSONParseError) {
        let count = literal.utf8CodeUnitCount
        guard index + count <= buffer.count else { throw error("unexpected end of input") }
        guard JSONParser.hasLiteral(literal, buffer, at: index) else { throw error("invalid literal, expected \(literal)") }
        index += count
    }

    private mutating func parseObject(depth: Int) throws(JSONParseError) -> JSONValue {
        index += 1
        var members: [(key: String, value: JSONValue)] = []
        // Records and events have a handful of keys: one allocation instead of growing 1, 2, 4, 8.
        members.reserveCapacity(8)
        skipWhitespace()
        if index < buffer.count, buffer[index] == UInt8(ascii: "}") { index += 1; return .object(JSONObject(members)) }
        while true {
            skipWhitespace()
            guard index < buffer.count, buffer[index] == UInt8(ascii: "\"") else { throw error("expected a string key") }
            let key = try parseString()
            skipWhitespace()
            guard index < buffer.count, buffer[index] == UInt8(ascii: ":") else { throw error("expected ':' after key") }
            index += 1
            skipWhitespace()
            members.append((key: key, value: try parseValue(depth: depth + 1)))
            skipWhitespace()
            guard index < buffer.count else { throw error("unexpected end of input in object") }
            if buffer[index] == UInt8(ascii: ",") { index += 1; continue }
            if buffer[index] == UInt8(ascii: "}") { index += 1; return .object(JSONObject(members)) }
            throw error("expected ',' or '}' in object")
        }
    }

    private mutating func parseArray(depth: Int) throws(JSONParseError) -> JSONValue {
        index += 1
        var elements: [JSONValue] = []
        skipWhitespace()
        if index < buffer.count, buffer[index] == UInt8(ascii: "]") { index += 1; return .array(elements) }
        while true {
            skipWhitespace()
            elements.append(try parseValue(depth: depth + 1))
            skipWhitespace()
            guard index < buffer.count else { throw error("unexpected end of input in array") }
            if buffer[index] == UInt8(ascii: ",") { index += 1; continue }
            if buffer[index] == UInt8(ascii: "]") { index += 1; return .array(elements) }
            throw error("expected ',' or ']' in array")
        }
    }

    /// A string, read by `JSONScanner` (the one scanner of the grammar); only when it refuses
    /// one does the parser walk the string again to say why, and where.
    private mutating func parseString() throws(JSONParseError) -> String {
        var scanner = JSONScanner(buffer, at: index)
        if let token = scanner.string() {
            index = scanner.index
            return scanner.text(token)
        }
        throw stringError()
    }

    /// Why the string at `index` is refused: the first control character, bad escape or
    /// unpaired surrogate, else (every escape well formed) its UTF-8.
    private mutating func stringError() -> JSONParseError {
        index += 1
        let start = index
        while index < buffer.count {
            switch buffer[index] {
            case UInt8(ascii: "\""):
                return JSONParseError(offset: start, reason: "string is not valid UTF-8")
            case UInt8(ascii: "\\"):
                index += 1
                guard index < buffer.count else { return error("unexpected end of input in string escape") }
                let escape = buffer[index]
                index += 1
                switch escape {
                case UInt8(ascii: "\""), UInt8(ascii: "\\"), UInt8(ascii: "/"), UInt8(ascii: "b"), UInt8(ascii: "f"),
                     UInt8(ascii: "n"), UInt8(ascii: "r"), UInt8(ascii: "t"):
                    continue
                case UInt8(ascii: "u"):
                    do throws(JSONParseError) {
                        let scalar = try parseHex4()
                        if (0xD800..<0xDC00).contains(scalar) {
                            guard index + 1 < buffer.count, buffer[index] == UInt8(ascii: "\\"),
                                  buffer[index + 1] == UInt8(ascii: "u") else { return error("unpaired surrogate in \\u escape") }
                            index += 2
                            let low = try parseHex4()
                            guard (0xDC00..<0xE000).contains(low) else { return error("invalid low surrogate in \\u escape") }
                        } else if (0xDC00..<0xE000).contains(scalar) {
                            return error("unpaired surrogate in \\u escape")
                        }
                    } catch {
                        return error
                    }
                default:
                    return error("invalid escape '\\\(Character(Unicode.Scalar(escape)))'")
                }
            case 0..<0x20:
                return error("control character in string")
            default:
                index += 1
            }
        }
        return error("unterminated string")
    }

    private mutating func parseHex4() throws(JSONParseError) -> UInt32 {
        guard index + 4 <= buffer.count else { throw error("unexpected end of input in \\u escape") }
        guard let value = JSONParser.hex4(buffer, at: index) else {
            // The error points at the offending digit, not at the escape.
            while JSONParser.hexDigit(buffer[index]) != nil { index += 1 }
            throw error("invalid hex digit in \\u escape")
        }
        index += 4
        return value
    }

    /// The first index at or after `start` that is not JSON whitespace (space, tab, LF, CR).
    /// Shared, like `hex4`, by every reader of JSON on bytes.
    @inlinable
    public static func whitespaceEnd(_ bytes: UnsafeBufferPointer<UInt8>, from start: Int) -> Int {
        var index = start
        while index < bytes.count {
            switch bytes[index] {
            case 0x20, 0x09, 0x0A, 0x0D: index += 1
            default: return index
            }
        }
        return index
    }

    /// Whether `literal` (`true`, `false`, `null`) is spelt out at `start`.
    @inlinable
    public static func hasLiteral(_ literal: StaticString, _ bytes: UnsafeBufferPointer<UInt8>, at start: Int) -> Bool {
        let count = literal.utf8CodeUnitCount
        guard start >= 0, start + count <= bytes.count else { return false }
        for k in 0..<count where bytes[start + k] != literal.utf8Start[k] { return false }
        return true
    }

    /// The four hex digits of a `\u` escape starting at `start` (either case), or nil when
    /// fewer than four bytes are left or one is not a hex digit. Shared by this parser's
    /// error path and `JSONScanner`.
    public static func hex4(_ bytes: UnsafeBufferPointer<UInt8>, at start: Int) -> UInt32? {
        guard start >= 0, start + 4 <= bytes.count else { return nil }
        var value: UInt32 = 0
        for k in start..<(start + 4) {
            guard let digit = hexDigit(bytes[k]) else { return nil }
            value = value << 4 | digit
        }
        return value
    }

    private static func hexDigit(_ byte: UInt8) -> UInt32? {
        switch byte {
        case UInt8(ascii: "0")...UInt8(ascii: "9"): UInt32(byte - UInt8(ascii: "0"))
        case UInt8(ascii: "a")...UInt8(ascii: "f"): UInt32(byte - UInt8(ascii: "a") + 10)
        case UInt8(ascii: "A")...UInt8(ascii: "F"): UInt32(byte - UInt8(ascii: "A") + 10)
        default: nil
        }
    }

    private mutating func parseNumber() throws(JSONParseError) -> JSONValue {
        let start = index
        var isInteger = true
        if buffer[index] == UInt8(ascii: "-") { index += 1 }
        guard index < buffer.count, (UInt8(ascii: "0")...UInt8(ascii: "9")).contains(buffer[index]) else {
            throw error("expected a digit")
        }
        if buffer[index] == UInt8(ascii: "0") {
            index += 1
        } else {
            while index < buffer.count, (UInt8(ascii: "0")...UInt8(ascii: "9")).contains(buffer[index]) { index += 1 }
        }
        if index < buffer.count, buffer[index] == UInt8(ascii: ".") {
            isInteger = false
            index += 1
            let digits = index
            while index < buffer.count, (UInt8(ascii: "0")...UInt8(ascii: "9")).contains(buffer[index]) { index += 1 }
            guard index > digits else { throw error("expected a digit after '.'") }
        }
        if index < buffer.count, buffer[index] == UInt8(ascii: "e") || buffer[index] == UInt8(ascii: "E") {
            isInteger = false
            index += 1
            if index < buffer.count, buffer[index] == UInt8(ascii: "+") || buffer[index] == UInt8(ascii: "-") { index += 1 }
            let digits = index
            while index < buffer.count, (UInt8(ascii: "0")...UInt8(ascii: "9")).contains(buffer[index]) { index += 1 }
            guard index > digits else { throw error("expected a digit in exponent") }
        }
        let negative = buffer[start] == UInt8(ascii: "-")
        if isInteger, index - start - (negative ? 1 : 0) <= 18 {
            // Up to 18 digits cannot overflow: the value without making a String for Int64(_:).
            var value: Int64 = 0
            for i in (start + (negative ? 1 : 0))..<index { value = value * 10 + Int64(buffer[i] - UInt8(ascii: "0")) }
            return .int(negative ? -value : value)
        }
        let text = String(decoding: UnsafeBufferPointer(rebasing: buffer[start..<index]), as: UTF8.self)
        if isInteger, let value = Int64(text) { return .int(value) }
        guard let value = Double(text) else { throw JSONParseError(offset: start, reason: "invalid number") }
        guard value.isFinite else { throw JSONParseError(offset: start, reason: JSONParser.outOfRange) }
        return .double(value)
    }

    static let outOfRange = "number out of range (beyond ±1.8e308)"

    /// Whether the number spelled by `bytes[range]` (valid JSON number syntax) is within a
    /// double's range. RFC 8259 lets a parser limit the range it accepts, and this one
    /// refuses what would become infinity: infinity has no JSON spelling, so it could not
    /// be written back (`1e999` would turn into `null`). Shared with every byte-level
    /// reader that must refuse exactly what the parser refuses.
    public static func numberIsFinite(_ bytes: UnsafeBufferPointer<UInt8>, _ range: Range<Int>) -> Bool {
        let text = String(decoding: UnsafeBufferPointer(rebasing: bytes[range]), as: UTF8.self)
        return Double(text)?.isFinite ?? false
    }
}
