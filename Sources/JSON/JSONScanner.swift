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

        /// A token as `string()` gave it, kept elsewhere (the capture decoder keeps its
        /// places in 32 bits) and made again.
        public init(content: Range<Int>, escaped: Bool, isASCII: Bool) {
            self.content = content
            self.escaped = escaped
            self.isASCII = isASCII
        }
    }

    /// A number's place in the buffer, already validated.
    public struct NumberToken: Sendable, Equatable {
        public var range: Range<Int>
        /// Its value when it is written as an integer (no fraction, no exponent) within
        /// Int64, as `JSONParser` gives `.int` for it; nil for anything else.
        public var integer: Int64?

        @usableFromInline init(range: Range<Int>, integer: Int64?) {
            self.range = range
            self.integer = integer
        }
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
    ///
    /// Inlined, and compared four bytes a load (the fifth of `false` alone): a frame's
    /// three flags are read with it on every line, and as a call comparing byte by byte
    /// it was some 80 instructions a flag.
    @inlinable @inline(__always)
    public mutating func literal(_ word: StaticString) -> Bool {
        let n = word.utf8CodeUnitCount
        guard word.hasPointerRepresentation, n == 4 || n == 5, index >= 0, index &+ n <= bytes.count,
              let base = bytes.baseAddress else { return spelledOut(word) }
        let here = UnsafeRawPointer(base + index), spelled = UnsafeRawPointer(word.utf8Start)
        guard here.loadUnaligned(as: UInt32.self) == spelled.loadUnaligned(as: UInt32.self),
              n == 4 || here.load(fromByteOffset: 4, as: UInt8.self) == spelled.load(fromByteOffset: 4, as: UInt8.self)
        else { return false }
        index &+= n
        return true
    }

    /// `literal` byte by byte, for any other word.
    @usableFromInline mutating func spelledOut(_ word: StaticString) -> Bool {
        guard JSONParser.hasLiteral(word, bytes, at: index) else { return false }
        index += word.utf8CodeUnitCount
        return true
    }

    /// `number()` for a positive integer of up to 18 digits with room after it (a record's
    /// connection, time, opcode and length), inlined where it is read: the digits summed as
    /// they are found, through the base pointer, and the token made when the byte after them
    /// ends the number (no fraction, no exponent, no more digits); anything else is
    /// `number()`'s. The same answer as `number()` in every case.
    @inlinable @inline(__always)
    public mutating func shortNumber() -> NumberToken? {
        let start = index
        guard start >= 0, start &+ 18 < bytes.count, let base = bytes.baseAddress else { return number() }
        let first = base[start] &- UInt8(ascii: "0")
        guard first >= 1, first <= 9 else { return number() }
        var value = Int64(first)
        var i = start &+ 1
        while i < start &+ 18 {
            let digit = base[i] &- UInt8(ascii: "0")
            guard digit < 10 else { break }
            value = value &* 10 &+ Int64(digit)
            i &+= 1
        }
        let after = base[i]  // (i <= start + 18 < count)
        guard after &- UInt8(ascii: "0") >= 10, after != UInt8(ascii: "."), after | 0x20 != UInt8(ascii: "e") else {
            return number()
        }
        index = i
        return NumberToken(range: start..<i, integer: value)
    }

    /// A number at `index` (a `-` or a digit), or nil where the parser would throw.
    ///
    /// Read through the buffer's base pointer, and the value of an integer of up to 18
    /// digits accumulated as its digits are found: every record has three or four numbers,
    /// and with a bounds check per byte and a second pass for the value this was 2.3% of
    /// `analyze`'s instructions. `index` ends where it did (past what was read) on failure too.
    public mutating func number() -> NumberToken? {
        guard let base = bytes.baseAddress else { return nil }
        let count = bytes.count
        @inline(__always) func digit(_ i: Int) -> UInt8? {
            guard i < count else { return nil }
            let d = base[i] &- UInt8(ascii: "0")
            return d < 10 ? d : nil
        }
        let start = index
        var i = index
        let negative = i < count && base[i] == UInt8(ascii: "-")
        if negative { i &+= 1 }
        guard let first = digit(i) else {
            index = i
            return nil
        }
        let integerStart = i
        var value = Int64(first)
        i &+= 1
        if first != 0 {
            while let d = digit(i) {
                value = value &* 10 &+ Int64(d)  // (wraps past 18 digits: then not used)
                i &+= 1
            }
        }
        let integerDigits = integerStart..<i
        // Only an exponent or more than 308 integer digits can leave a double's range, so
        // only those ask the parser's range check (which makes a String).
        var mayOverflow = integerDigits.count > 308
        var isInteger = true
        if i < count, base[i] == UInt8(ascii: ".") {
            isInteger = false
            i &+= 1
            guard digit(i) != nil else {
                index = i
                return nil
            }
            while digit(i) != nil { i &+= 1 }
        }
        if i < count, base[i] | 0x20 == UInt8(ascii: "e") {
            isInteger = false
            mayOverflow = true
            i &+= 1
            if i < count, base[i] == UInt8(ascii: "+") || base[i] == UInt8(ascii: "-") { i &+= 1 }
            guard digit(i) != nil else {
                index = i
                return nil
            }
            while digit(i) != nil { i &+= 1 }
        }
        index = i
        guard !mayOverflow || JSONParser.numberIsFinite(bytes, start..<i) else { return nil }
        guard isInteger else { return NumberToken(range: start..<i, integer: nil) }
        let integer = integerDigits.count <= 18 ? (negative ? -value : value) : integerValue(integerDigits, negative: negative)
        return NumberToken(range: start..<i, integer: integer)
    }

    /// The value of the decimal digits `digits` (negated when `negative`), or nil outside
    /// Int64. Eighteen digits or fewer cannot overflow, so only longer runs are checked.
    private func integerValue(_ digits: Range<Int>, negative: Bool) -> Int64? {
        if digits.count <= 18 {
            var value: Int64 = 0
            for i in digits { value = value &* 10 &+ Int64(bytes[i] &- UInt8(ascii: "0")) }
            return negative ? -value : value
        }
        guard digits.count == 19 else { return nil }
        // Accumulated negatively, so that Int64.min fits.
        var value: Int64 = 0
        for i in digits {
            let (times10, o1) = value.multipliedReportingOverflow(by: 10)
            let (next, o2) = times10.subtractingReportingOverflow(Int64(bytes[i] &- UInt8(ascii: "0")))
            guard !o1, !o2 else { return nil }
            value = next
        }
        if negative { return value }
        return value == .min ? nil : -value
    }

    // MARK: Strings

    /// A string starting at its opening quote, or nil where `JSONParser` would throw
    /// (control character, bad escape, unpaired surrogate, invalid UTF-8, no closing quote).
    /// (The scan is `scanString`, shared with `stringWithText`, which also writes the text.)
    public mutating func string() -> StringToken? {
        var nowhere = NoText()
        return scanString(into: &nowhere)
    }

    /// `string()` for a short string (an object key, a name like `"frame"`), inlined where
    /// it is read: when the eight bytes after the opening quote hold the closing quote with
    /// nothing but plain bytes before it, that is the token, found with one load and no
    /// call; anything else is `string()`'s. The same answer as `string()` in every case.
    /// (`string()` for every key of every line was some 70 instructions a key.)
    @inlinable @inline(__always)
    public mutating func shortString() -> StringToken? {
        let start = index &+ 1
        if start &+ 8 <= bytes.count, let base = bytes.baseAddress {
            let special = Self.specialBytes(UnsafeRawPointer(base + start).loadUnaligned(as: UInt64.self))
            if special != 0 {
                let length = special.trailingZeroBitCount &>> 3
                if base[start &+ length] == UInt8(ascii: "\"") {
                    index = start &+ length &+ 1
                    return StringToken(content: start..<(start &+ length), escaped: false, isASCII: true)
                }
            }
        }
        return string()
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

    /// The backslashes of `word`, as their high bits; the lowest flag is always a real one
    /// (as in `specialBytes`).
    @inline(__always) static func backslashBytes(_ word: UInt64) -> UInt64 {
        let backslash = word ^ 0x5C5C_5C5C_5C5C_5C5C
        return (backslash &- 0x0101_0101_0101_0101) & ~backslash & 0x8080_8080_8080_8080
    }

    /// The byte the one-letter escape `\letter` stands for (`\n` a newline, `\"` a quote);
    /// 0 for any other letter, `u` included (no one-letter escape stands for NUL, and a plain
    /// byte was measurably cheaper than an optional in the scan's loop). The one table of
    /// them: the scan checks and writes escapes with it, `decodeEscape` writes them.
    @inline(__always) static func oneLetterEscape(_ letter: UInt8) -> UInt8 {
        switch letter {
        case UInt8(ascii: "\""), UInt8(ascii: "\\"), UInt8(ascii: "/"): letter
        case UInt8(ascii: "b"): 0x08
        case UInt8(ascii: "f"): 0x0C
        case UInt8(ascii: "n"): 0x0A
        case UInt8(ascii: "r"): 0x0D
        case UInt8(ascii: "t"): 0x09
        default: 0
        }
    }

    /// The end of the `\u` escape whose backslash is at `i`, as `JSONParser.parseString`
    /// accepts it (a high surrogate only with a low one after it), or nil.
    @inline(__always) func unicodeEscapeEnd(at i: Int) -> Int? {
        guard i &+ 1 < bytes.count, bytes[i &+ 1] == UInt8(ascii: "u"),
              let scalar = JSONParser.hex4(bytes, at: i &+ 2) else { return nil }
        if scalar >= 0xD800 && scalar < 0xDC00 {
            guard i &+ 7 < bytes.count, bytes[i &+ 6] == UInt8(ascii: "\\"), bytes[i &+ 7] == UInt8(ascii: "u"),
                  let low = JSONParser.hex4(bytes, at: i &+ 8), low >= 0xDC00 && low < 0xE000 else { return nil }
            return i &+ 12
        }
        return scalar >= 0xDC00 && scalar < 0xE000 ? nil : i &+ 6
    }

    /// The end of the UTF-8 character starting with the byte at `i` (0x80 or above), or nil
    /// when it is not well formed (RFC 3629: no overlong forms, no surrogates, nothing above
    /// U+10FFFF, no lone continuation byte, no sequence cut short).
    @inline(__always)
    static func utf8CharacterEnd(_ base: UnsafePointer<UInt8>, count: Int, at i: Int) -> Int? {
        let lead = base[i]
        // The accepted range of the second byte, and the number of bytes.
        let low: UInt8, high: UInt8, length: Int
        switch lead {
        case 0xC2...0xDF: (low, high, length) = (0x80, 0xBF, 2)
        case 0xE0: (low, high, length) = (0xA0, 0xBF, 3)
        case 0xE1...0xEC, 0xEE...0xEF: (low, high, length) = (0x80, 0xBF, 3)
        case 0xED: (low, high, length) = (0x80, 0x9F, 3)
        case 0xF0: (low, high, length) = (0x90, 0xBF, 4)
        case 0xF1...0xF3: (low, high, length) = (0x80, 0xBF, 4)
        case 0xF4: (low, high, length) = (0x80, 0x8F, 4)
        default: return nil
        }
        guard i &+ length <= count, base[i &+ 1] >= low, base[i &+ 1] <= high else { return nil }
        var k = 2
        while k < length {
            guard base[i &+ k] & 0xC0 == 0x80 else { return nil }
            k &+= 1
        }
        return i &+ length
    }

    // MARK: A string token's text

    /// Whether the token's text is exactly `name` (an escaped token never is: its bytes are
    /// not its text, so callers decide what an escaped key means).
    ///
    /// Inlinable, and eight (then four) bytes a comparison: the record decoder asks it for
    /// every key of every line and for the values it tells apart by name, and as a call
    /// comparing byte by byte it was some 1,250 instructions a record. Inlined with a
    /// literal name, the length and the name's words are constants. Always inlined: left to
    /// the optimizer, the record decoder's reads of `from`, `type` and `action` stayed
    /// calls (1% of the instructions).
    @inlinable @inline(__always)
    public func matches(_ token: StringToken, _ name: StaticString) -> Bool {
        let n = name.utf8CodeUnitCount
        guard !token.escaped, token.content.count == n else { return false }
        guard n > 0 else { return true }
        guard token.content.lowerBound >= 0, token.content.upperBound <= bytes.count,
              let base = bytes.baseAddress else { return false }
        let text = UnsafeRawPointer(base + token.content.lowerBound), spelled = UnsafeRawPointer(name.utf8Start)
        var k = 0
        while k &+ 8 <= n {
            guard text.loadUnaligned(fromByteOffset: k, as: UInt64.self)
                == spelled.loadUnaligned(fromByteOffset: k, as: UInt64.self) else { return false }
            k &+= 8
        }
        if k &+ 4 <= n {
            guard text.loadUnaligned(fromByteOffset: k, as: UInt32.self)
                == spelled.loadUnaligned(fromByteOffset: k, as: UInt32.self) else { return false }
            k &+= 4
        }
        while k < n {
            guard text.load(fromByteOffset: k, as: UInt8.self) == spelled.load(fromByteOffset: k, as: UInt8.self) else { return false }
            k &+= 1
        }
        return true
    }

    /// The token's text, as `JSONParser` would give it.
    public func text(_ token: StringToken) -> String {
        let raw = UnsafeBufferPointer(rebasing: bytes[token.content])
        guard token.escaped else { return String(decoding: raw, as: UTF8.self) }
        return String(unsafeUninitializedCapacity: raw.count) { Self.unescape(raw, into: $0) }
    }

    /// The token's text as UTF-8 bytes, in an array of exactly its size.
    public func textBytes(_ token: StringToken) -> [UInt8] {
        let raw = UnsafeBufferPointer(rebasing: bytes[token.content])
        return [UInt8](unsafeUninitializedCapacity: raw.count) { out, count in
            if token.escaped {
                count = Self.unescape(raw, into: out)
            } else {
                if let source = raw.baseAddress, let target = out.baseAddress { target.update(from: source, count: raw.count) }
                count = raw.count
            }
        }
    }

    /// Appends the token's text (escapes decoded) to `out`.
    public func appendText(_ token: StringToken, to out: inout [UInt8]) {
        out.append(contentsOf: textBytes(token))
    }

    /// Writes the text of a validated string's content `raw` (the bytes between its quotes)
    /// to `out`, which has room for `raw.count` bytes, and returns how many it wrote (never
    /// more: every escape is longer than what it stands for). The scan checked every escape
    /// and paired every surrogate, so none is checked again. Plain bytes are copied eight
    /// at a time up to the next backslash.
    static func unescape(_ raw: UnsafeBufferPointer<UInt8>, into out: UnsafeMutableBufferPointer<UInt8>) -> Int {
        guard let source = raw.baseAddress, let target = out.baseAddress else { return 0 }
        precondition(out.count >= raw.count)
        let end = raw.count
        var i = 0, o = 0  // o <= i throughout, so a word stored at o fits when one loaded at i does
        while i < end {
            if i &+ 8 <= end {
                let word = UnsafeRawPointer(source + i).loadUnaligned(as: UInt64.self)
                UnsafeMutableRawPointer(target + o).storeBytes(of: word, as: UInt64.self)
                let backslashes = backslashBytes(word)
                if backslashes == 0 {
                    i &+= 8
                    o &+= 8
                    continue
                }
                let plain = backslashes.trailingZeroBitCount &>> 3
                i &+= plain
                o &+= plain
            } else if source[i] != UInt8(ascii: "\\") {
                target[o] = source[i]
                i &+= 1
                o &+= 1
                continue
            }
            // A backslash at i, with its escape after it (a scanned token ends in neither).
            guard i &+ 1 < end else { break }
            let (next, written) = decodeEscape(raw, at: i, to: target + o)
            i = next
            o &+= written
        }
        return o
    }

    /// Writes what the escape whose backslash is at `i` in `source` stands for (validated:
    /// the scan checked the escape and paired its surrogates); returns where the escape
    /// ends and how many bytes it wrote (never more than the escape's length).
    @inline(__always)
    static func decodeEscape(_ source: UnsafeBufferPointer<UInt8>, at i: Int,
                             to out: UnsafeMutablePointer<UInt8>) -> (next: Int, written: Int) {
        let stands = oneLetterEscape(source[i &+ 1])
        if stands != 0 {
            out[0] = stands
            return (i &+ 2, 1)
        }
        // `\u`
        var scalar = JSONParser.hex4(source, at: i &+ 2) ?? 0xFFFD
        if scalar >= 0xD800 && scalar < 0xDC00 {
            let low = JSONParser.hex4(source, at: i &+ 8) ?? 0xDC00
            scalar = 0x10000 + ((scalar - 0xD800) << 10) + (low & 0x3FF)
            return (i &+ 12, writeUTF8(scalar, to: out))
        }
        return (i &+ 6, writeUTF8(scalar, to: out))
    }

    /// Writes `scalar` (below 0x110000, not a surrogate: the scan checked it) as UTF-8;
    /// returns its length.
    private static func writeUTF8(_ scalar: UInt32, to out: UnsafeMutablePointer<UInt8>) -> Int {
        switch scalar {
        case 0..<0x80:
            out[0] = UInt8(scalar)
            return 1
        case 0x80..<0x800:
            out[0] = UInt8(0xC0 | scalar >> 6)
            out[1] = UInt8(0x80 | scalar & 0x3F)
            return 2
        case 0x800..<0x10000:
            out[0] = UInt8(0xE0 | scalar >> 12)
            out[1] = UInt8(0x80 | scalar >> 6 & 0x3F)
            out[2] = UInt8(0x80 | scalar & 0x3F)
            return 3
        default:
            out[0] = UInt8(0xF0 | scalar >> 18)
            out[1] = UInt8(0x80 | scalar >> 12 & 0x3F)
            out[2] = UInt8(0x80 | scalar >> 6 & 0x3F)
            out[3] = UInt8(0x80 | scalar & 0x3F)
            return 4
        }
    }
}
