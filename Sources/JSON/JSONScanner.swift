import Vocabulary

/// The one byte-level JSON scanner: walks a buffer token by token, without building a tree,
/// and validates exactly `JSONParser`'s grammar (strict RFC 8259, its depth limit, UTF-8
/// checked strings, paired surrogates, numbers within a double's range). Every reader of
/// JSON that does not want a tree stands on it: the capture record decoder reads records
/// member by member with it, and the protocol entries' `JSONSkimmer` finds an envelope's
/// members with it. A token it returns is valid JSON; where the parser would throw, it
/// returns nil (the parser then says why, with its offsets and messages).
///
/// Every read is checked against the buffer's bounds.
public struct JSONScanner {
    public let bytes: UnsafeBufferPointer<UInt8>
    /// The next byte to read.
    public var index: Int

    public init(_ bytes: UnsafeBufferPointer<UInt8>, at index: Int = 0) {
        self.bytes = bytes
        self.index = index
    }

    /// A string's place in the buffer, already validated.
    public struct StringToken: Sendable, Equatable {
        /// The bytes between the quotes.
        public var content: Range<Int>
        /// Holds an escape: the bytes between the quotes are not its text.
        public var escaped: Bool
        /// Every raw byte is ASCII (an escape may still spell a non-ASCII character).
        public var isASCII: Bool
    }

    /// A number's place in the buffer, already validated.
    public struct NumberToken: Sendable, Equatable {
        public var range: Range<Int>
        /// Its value when it is written as an integer (no fraction, no exponent) within
        /// Int64, as `JSONParser` gives `.int` for it; nil for anything else.
        public var integer: Int64?
    }

    /// The byte at `index`, or nil at the end.
    @inlinable public var current: UInt8? { index < bytes.count ? bytes[index] : nil }

    @inlinable public var isAtEnd: Bool { index >= bytes.count }

    @inlinable public mutating func skipWhitespace() { index = JSONParser.whitespaceEnd(bytes, from: index) }

    /// Steps over `byte` when it is next; false (and no step) otherwise.
    @inlinable public mutating func consume(_ byte: UInt8) -> Bool {
        guard index < bytes.count, bytes[index] == byte else { return false }
        index += 1
        return true
    }

    /// Whether the rest of the buffer is white space only.
    public mutating func isAtEndAfterWhitespace() -> Bool {
        skipWhitespace()
        return index == bytes.count
    }

    /// Whether `bytes` is one JSON text that `JSONParser` accepts.
    public static func isValid(_ bytes: UnsafeBufferPointer<UInt8>) -> Bool {
        var scanner = JSONScanner(bytes)
        scanner.skipWhitespace()
        return scanner.skipValue(depth: 0) && scanner.isAtEndAfterWhitespace()
    }

    // MARK: Values

    /// Steps over one value at `depth` (the parser's depth: a top-level object's members
    /// are at 1); false where the parser would throw.
    public mutating func skipValue(depth: Int) -> Bool {
        guard index < bytes.count, depth < JSONParser.maxDepth else { return false }
        switch bytes[index] {
        case UInt8(ascii: "{"):
            index += 1
            skipWhitespace()
            if consume(UInt8(ascii: "}")) { return true }
            while true {
                skipWhitespace()
                guard current == UInt8(ascii: "\""), string() != nil else { return false }
                skipWhitespace()
                guard consume(UInt8(ascii: ":")) else { return false }
                skipWhitespace()
                guard skipValue(depth: depth + 1) else { return false }
                skipWhitespace()
                if consume(UInt8(ascii: ",")) { continue }
                return consume(UInt8(ascii: "}"))
            }
        case UInt8(ascii: "["):
            index += 1
            skipWhitespace()
            if consume(UInt8(ascii: "]")) { return true }
            while true {
                skipWhitespace()
                guard skipValue(depth: depth + 1) else { return false }
                skipWhitespace()
                if consume(UInt8(ascii: ",")) { continue }
                return consume(UInt8(ascii: "]"))
            }
        case UInt8(ascii: "\""): return string() != nil
        case UInt8(ascii: "t"): return literal("true")
        case UInt8(ascii: "f"): return literal("false")
        case UInt8(ascii: "n"): return literal("null")
        case UInt8(ascii: "-"), UInt8(ascii: "0")...UInt8(ascii: "9"): return number() != nil
        default: return false
        }
    }

    /// Steps over `word` (`true`, `false`, `null`) when it is spelt out next.
    public mutating func literal(_ word: StaticString) -> Bool {
        guard JSONParser.hasLiteral(word, bytes, at: index) else { return false }
        index += word.utf8CodeUnitCount
        return true
    }

    @inline(__always) private func isDigit(_ i: Int) -> Bool {
        i < bytes.count && bytes[i] >= UInt8(ascii: "0") && bytes[i] <= UInt8(ascii: "9")
    }

    /// A number at `index` (a `-` or a digit), or nil where the parser would throw.
    public mutating func number() -> NumberToken? {
        let start = index
        let negative = current == UInt8(ascii: "-")
        if negative { index += 1 }
        guard isDigit(index) else { return nil }
        let integerStart = index
        // Accumulated negatively, so that Int64.min fits; nil once it would overflow.
        var value: Int64? = 0
        if bytes[index] == UInt8(ascii: "0") {
            index += 1
        } else {
            while isDigit(index) {
                if let v = value {
                    let (times10, o1) = v.multipliedReportingOverflow(by: 10)
                    let (next, o2) = times10.subtractingReportingOverflow(Int64(bytes[index] &- UInt8(ascii: "0")))
                    value = o1 || o2 ? nil : next
                }
                index += 1
            }
        }
        // Only an exponent or more than 308 integer digits can leave a double's range, so
        // only those ask the parser's range check (which makes a String).
        var mayOverflow = index - integerStart > 308
        var isInteger = true
        if current == UInt8(ascii: ".") {
            isInteger = false
            index += 1
            guard isDigit(index) else { return nil }
            while isDigit(index) { index += 1 }
        }
        if current == UInt8(ascii: "e") || current == UInt8(ascii: "E") {
            isInteger = false
            mayOverflow = true
            index += 1
            if current == UInt8(ascii: "+") || current == UInt8(ascii: "-") { index += 1 }
            guard isDigit(index) else { return nil }
            while isDigit(index) { index += 1 }
        }
        guard !mayOverflow || JSONParser.numberIsFinite(bytes, start..<index) else { return nil }
        var integer: Int64?
        if isInteger, let v = value {
            if negative {
                integer = v
            } else if v != .min {
                integer = -v
            }
        }
        return NumberToken(range: start..<index, integer: integer)
    }

    // MARK: Strings

    /// A string starting at its opening quote, or nil where `JSONParser` would throw
    /// (control character, bad escape, unpaired surrogate, invalid UTF-8, no closing quote).
    public mutating func string() -> StringToken? {
        // Strings are most of a line's bytes (a Bird event's "data" is often JSON inside a
        // string): plain bytes are skipped eight at a time, then one at a time up to the
        // next quote, backslash or control byte, which alone take a branch.
        var i = index &+ 1
        let start = i
        let count = bytes.count
        guard let baseAddress = bytes.baseAddress else { return nil }
        let base = UnsafeRawPointer(baseAddress)
        var escaped = false
        var allBits: UInt8 = 0  // OR of every raw byte: its high bit says "not ASCII"
        var utf8 = UTF8Validator()
        var runStart = i
        var runBits: UInt8 = 0  // the same for the current run
        while true {
            // Eight bytes a load; the first special byte of a word ends the skip right
            // there (JSON inside a string has a `\"` every few bytes, so runs are short).
            while i &+ 8 <= count {
                let word = base.loadUnaligned(fromByteOffset: i, as: UInt64.self)
                let special = Self.specialBytes(word)
                if special == 0 { i &+= 8; continue }
                i &+= special.trailingZeroBitCount &>> 3
                break
            }
            while i < count {
                let byte = bytes[i]
                if byte < 0x20 || byte == UInt8(ascii: "\"") || byte == UInt8(ascii: "\\") { break }
                runBits |= byte
                i &+= 1
            }
            guard i < count, bytes[i] >= 0x20 else { index = i; return nil }
            if bytes[i] == UInt8(ascii: "\\"), runBits < 0x80, i &+ 1 < count, Self.isOneByteEscape(bytes[i &+ 1]) {
                // `\"`, `\\`, `\n` and the like inside an ASCII run: skipped in place (JSON
                // inside a string is full of them); the run stays ASCII.
                escaped = true
                i &+= 2
                continue
            }
            // Raw bytes before a quote or an escape must be complete UTF-8 on their own:
            // an escape always decodes to whole characters.
            if runBits >= 0x80 {
                utf8.reset()
                guard utf8.feed(UnsafeBufferPointer(rebasing: bytes[runStart..<i])), utf8.isComplete else {
                    index = i
                    return nil
                }
                allBits |= runBits
            }
            if bytes[i] == UInt8(ascii: "\"") {
                index = i &+ 1
                return StringToken(content: start..<i, escaped: escaped, isASCII: allBits < 0x80)
            }
            escaped = true
            index = i
            guard skipEscape() else { return nil }
            i = index
            runStart = i
            runBits = 0
        }
    }

    /// The bytes of `word` (little-endian: the first byte lowest) that are not printable
    /// ASCII other than `"` and `\`, as their high bits; zero when all eight are plain.
    /// The usual "has a zero byte" bit tricks: a borrow can flag a byte wrongly only above
    /// a byte that is flagged rightly, so the lowest flag always marks the first special
    /// byte (bytes from 0x80 up are flagged by their own high bit).
    @inline(__always) public static func specialBytes(_ word: UInt64) -> UInt64 {
        let ones: UInt64 = 0x0101_0101_0101_0101, highs: UInt64 = 0x8080_8080_8080_8080
        let quote = word ^ 0x2222_2222_2222_2222, backslash = word ^ 0x5C5C_5C5C_5C5C_5C5C
        let special = word
            | ((word &- 0x2020_2020_2020_2020) & ~word)
            | ((quote &- ones) & ~quote)
            | ((backslash &- ones) & ~backslash)
        return special & highs
    }

    /// The escapes that are one letter after the backslash (all but `\u`).
    @inline(__always) static func isOneByteEscape(_ byte: UInt8) -> Bool {
        switch byte {
        case UInt8(ascii: "\""), UInt8(ascii: "\\"), UInt8(ascii: "/"), UInt8(ascii: "b"),
             UInt8(ascii: "f"), UInt8(ascii: "n"), UInt8(ascii: "r"), UInt8(ascii: "t"):
            return true
        default:
            return false
        }
    }

    /// Steps over `\x` at `index`, as `JSONParser.parseString` accepts it.
    private mutating func skipEscape() -> Bool {
        index += 1
        guard index < bytes.count else { return false }
        let escape = bytes[index]
        index += 1
        if Self.isOneByteEscape(escape) { return true }
        guard escape == UInt8(ascii: "u"), let scalar = hex4() else { return false }
        if scalar >= 0xD800 && scalar < 0xDC00 {
            guard index + 1 < bytes.count, bytes[index] == UInt8(ascii: "\\"),
                  bytes[index + 1] == UInt8(ascii: "u") else { return false }
            index += 2
            guard let low = hex4(), low >= 0xDC00 && low < 0xE000 else { return false }
            return true
        }
        return !(scalar >= 0xDC00 && scalar < 0xE000)
    }

    private mutating func hex4() -> UInt32? {
        guard let value = JSONParser.hex4(bytes, at: index) else { return nil }
        index += 4
        return value
    }

    // MARK: A string token's text

    /// Whether the token's text is exactly `name` (an escaped token never is: its bytes are
    /// not its text, so callers decide what an escaped key means).
    public func matches(_ token: StringToken, _ name: StaticString) -> Bool {
        let n = name.utf8CodeUnitCount
        guard !token.escaped, token.content.count == n else { return false }
        let start = name.utf8Start
        for k in 0..<n where bytes[token.content.lowerBound + k] != start[k] { return false }
        return true
    }

    /// The token's text, as `JSONParser` would give it.
    public func text(_ token: StringToken) -> String {
        if !token.escaped { return String(decoding: UnsafeBufferPointer(rebasing: bytes[token.content]), as: UTF8.self) }
        var out: [UInt8] = []
        appendText(token, to: &out)
        return String(decoding: out, as: UTF8.self)
    }

    /// The token's text as UTF-8 bytes.
    public func textBytes(_ token: StringToken) -> [UInt8] {
        if !token.escaped { return Array(UnsafeBufferPointer(rebasing: bytes[token.content])) }
        var out: [UInt8] = []
        appendText(token, to: &out)
        return out
    }

    /// Appends the token's text (escapes decoded) to `out`. The token was validated when
    /// it was scanned, so every escape here is well formed and every surrogate paired.
    public func appendText(_ token: StringToken, to out: inout [UInt8]) {
        out.reserveCapacity(out.count + token.content.count)
        var i = token.content.lowerBound
        let end = token.content.upperBound
        while i < end {
            // Copy the run up to the next escape in one go (text payloads are mostly runs).
            var runEnd = i
            while runEnd < end, bytes[runEnd] != UInt8(ascii: "\\") { runEnd += 1 }
            if runEnd > i {
                out.append(contentsOf: UnsafeBufferPointer(rebasing: bytes[i..<runEnd]))
                i = runEnd
                continue
            }
            let escape = bytes[i + 1]
            i += 2
            switch escape {
            case UInt8(ascii: "b"): out.append(0x08)
            case UInt8(ascii: "f"): out.append(0x0C)
            case UInt8(ascii: "n"): out.append(0x0A)
            case UInt8(ascii: "r"): out.append(0x0D)
            case UInt8(ascii: "t"): out.append(0x09)
            case UInt8(ascii: "u"):
                var scalar = JSONParser.hex4(bytes, at: i) ?? 0xFFFD
                i += 4
                if (0xD800..<0xDC00).contains(scalar) {
                    let low = JSONParser.hex4(bytes, at: i + 2) ?? 0xDC00
                    i += 6
                    scalar = 0x10000 + ((scalar - 0xD800) << 10) + (low - 0xDC00)
                }
                Self.appendUTF8(scalar, to: &out)
            default:
                out.append(escape)  // `"`, `\` and `/` stand for themselves
            }
        }
    }

    /// `scalar` is below 0x110000 and not a surrogate (the scan checked it).
    private static func appendUTF8(_ scalar: UInt32, to out: inout [UInt8]) {
        switch scalar {
        case 0..<0x80:
            out.append(UInt8(scalar))
        case 0x80..<0x800:
            out.append(UInt8(0xC0 | scalar >> 6))
            out.append(UInt8(0x80 | scalar & 0x3F))
        case 0x800..<0x10000:
            out.append(UInt8(0xE0 | scalar >> 12))
            out.append(UInt8(0x80 | scalar >> 6 & 0x3F))
            out.append(UInt8(0x80 | scalar & 0x3F))
        default:
            out.append(UInt8(0xF0 | scalar >> 18))
            out.append(UInt8(0x80 | scalar >> 12 & 0x3F))
            out.append(UInt8(0x80 | scalar >> 6 & 0x3F))
            out.append(UInt8(0x80 | scalar & 0x3F))
        }
    }
}
