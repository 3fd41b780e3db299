import JSON
import WebSocket

/// Finds where a few members of a JSON object are, without building a tree: one validating
/// pass over the bytes against exactly `JSONParser`'s grammar (strict RFC 8259, its depth
/// limit, UTF-8 checked strings, paired surrogates), so invalid JSON is refused as the
/// parser would refuse it, and the first member of a name wins as in `JSONObject`.
///
/// The JSON-speaking wire protocols (Bird/Pusher today; Socket.IO, Phoenix Channels and
/// graphql-ws would be too) decode every text message's envelope with it: a tree per
/// message was about 15% of `faultline analyze`. What it does not decide itself (a key
/// with an escape, which might spell a wanted name) it answers `.needsParser`, so callers
/// stay exact by asking `JSONParser` then.
public struct JSONSkimmer {
    /// Where one member's value is.
    public struct Span: Sendable, Equatable {
        /// The value's bytes, a string's with its quotes.
        public var range: Range<Int>
        public var isString: Bool
        /// A string holding an escape: its bytes between the quotes are not its text.
        public var escaped: Bool

        /// A string's bytes between its quotes.
        public var content: Range<Int> { range.lowerBound + 1 ..< range.upperBound - 1 }
    }

    /// The values of the wanted members, in the order they were asked for (nil: absent).
    public struct Members: Sendable, Equatable {
        var spans: (Span?, Span?, Span?) = (nil, nil, nil)
        public subscript(index: Int) -> Span? {
            switch index {
            case 0: spans.0
            case 1: spans.1
            default: spans.2
            }
        }
        mutating func set(_ index: Int, _ span: Span) {
            switch index {
            case 0: spans.0 = span
            case 1: spans.1 = span
            default: spans.2 = span
            }
        }
        public static func == (a: Members, b: Members) -> Bool {
            a.spans.0 == b.spans.0 && a.spans.1 == b.spans.1 && a.spans.2 == b.spans.2
        }
    }

    public enum Outcome: Sendable, Equatable {
        /// Not one JSON text, or not an object.
        case notAnObject
        case members(Members)
        /// A key held an escape: only the full parser can say which member it names.
        case needsParser
    }

    /// Up to three member names looked for at once, in a static table (no allocation per call).
    public static func members(of bytes: UnsafeBufferPointer<UInt8>, named keys: [StaticString]) -> Outcome {
        precondition(keys.count <= 3, "at most three members at once")
        guard bytes.count > 0 else { return .notAnObject }
        var skimmer = JSONSkimmer(buffer: bytes)
        return skimmer.scanTopObject(keys)
    }

    /// `members(of:named:)` over an array's bytes.
    public static func members<Bytes: Collection<UInt8>>(of bytes: Bytes, named keys: [StaticString]) -> Outcome {
        bytes.withContiguousStorageIfAvailable { members(of: $0, named: keys) } ?? members(of: Array(bytes), named: keys)
    }

    /// Whether `bytes` is one valid JSON text (as `JSONParser` would accept it).
    public static func isValid(_ bytes: UnsafeBufferPointer<UInt8>) -> Bool {
        var skimmer = JSONSkimmer(buffer: bytes)
        skimmer.skipWhitespace()
        guard skimmer.skimValue(depth: 0) else { return false }
        skimmer.skipWhitespace()
        return skimmer.index == bytes.count
    }

    let buffer: UnsafeBufferPointer<UInt8>
    var index = 0

    init(buffer: UnsafeBufferPointer<UInt8>) { self.buffer = buffer }

    /// A string's bytes, and whether it held an escape.
    struct StringSpan {
        var start: Int
        var end: Int
        var escaped: Bool
    }

    mutating func scanTopObject(_ keys: [StaticString]) -> Outcome {
        skipWhitespace()
        guard index < buffer.count, buffer[index] == UInt8(ascii: "{") else { return .notAnObject }
        // An object at depth 0: its members' values at depth 1, as the parser counts.
        index += 1
        var found = Members()
        var seen: UInt8 = 0
        var sawEscapeInKey = false
        skipWhitespace()
        if index < buffer.count, buffer[index] == UInt8(ascii: "}") {
            index += 1
        } else {
            while true {
                skipWhitespace()
                guard index < buffer.count, buffer[index] == UInt8(ascii: "\"") else { return .notAnObject }
                guard let key = skimString() else { return .notAnObject }
                if key.escaped { sawEscapeInKey = true }
                var wanted = -1
                if !key.escaped {
                    for (i, name) in keys.enumerated() where seen & (1 << i) == 0 && isKey(key, name) {
                        wanted = i
                        break
                    }
                }
                skipWhitespace()
                guard index < buffer.count, buffer[index] == UInt8(ascii: ":") else { return .notAnObject }
                index += 1
                skipWhitespace()
                let valueStart = index
                if wanted >= 0, index < buffer.count, buffer[index] == UInt8(ascii: "\"") {
                    guard let value = skimString() else { return .notAnObject }
                    found.set(wanted, Span(range: valueStart..<index, isString: true, escaped: value.escaped))
                } else {
                    guard skimValue(depth: 1) else { return .notAnObject }
                    if wanted >= 0 { found.set(wanted, Span(range: valueStart..<index, isString: false, escaped: false)) }
                }
                if wanted >= 0 { seen |= 1 << wanted }
                skipWhitespace()
                guard index < buffer.count else { return .notAnObject }
                if buffer[index] == UInt8(ascii: ",") { index += 1; continue }
                if buffer[index] == UInt8(ascii: "}") { index += 1; break }
                return .notAnObject
            }
        }
        skipWhitespace()
        guard index == buffer.count else { return .notAnObject }
        // An escaped key might spell a wanted name (and come before the one seen).
        return sawEscapeInKey ? .needsParser : .members(found)
    }

    private func isKey(_ key: StringSpan, _ name: StaticString) -> Bool {
        let count = name.utf8CodeUnitCount
        guard key.end - key.start == count else { return false }
        let start = name.utf8Start
        for i in 0..<count where buffer[key.start + i] != start[i] { return false }
        return true
    }

    mutating func skipWhitespace() { index = JSONParser.whitespaceEnd(buffer, from: index) }

    /// Skims one value at `depth` (the parser's depth: the top object's members are at 1).
    mutating func skimValue(depth: Int) -> Bool {
        guard index < buffer.count, depth < JSONParser.maxDepth else { return false }
        switch buffer[index] {
        case UInt8(ascii: "{"):
            index += 1
            skipWhitespace()
            if index < buffer.count, buffer[index] == UInt8(ascii: "}") { index += 1; return true }
            while true {
                skipWhitespace()
                guard index < buffer.count, buffer[index] == UInt8(ascii: "\""), skimString() != nil else { return false }
                skipWhitespace()
                guard index < buffer.count, buffer[index] == UInt8(ascii: ":") else { return false }
                index += 1
                skipWhitespace()
                guard skimValue(depth: depth + 1) else { return false }
                skipWhitespace()
                guard index < buffer.count else { return false }
                if buffer[index] == UInt8(ascii: ",") { index += 1; continue }
                if buffer[index] == UInt8(ascii: "}") { index += 1; return true }
                return false
            }
        case UInt8(ascii: "["):
            index += 1
            skipWhitespace()
            if index < buffer.count, buffer[index] == UInt8(ascii: "]") { index += 1; return true }
            while true {
                skipWhitespace()
                guard skimValue(depth: depth + 1) else { return false }
                skipWhitespace()
                guard index < buffer.count else { return false }
                if buffer[index] == UInt8(ascii: ",") { index += 1; continue }
                if buffer[index] == UInt8(ascii: "]") { index += 1; return true }
                return false
            }
        case UInt8(ascii: "\""): return skimString() != nil
        case UInt8(ascii: "t"): return skimLiteral("true")
        case UInt8(ascii: "f"): return skimLiteral("false")
        case UInt8(ascii: "n"): return skimLiteral("null")
        case UInt8(ascii: "-"), UInt8(ascii: "0")...UInt8(ascii: "9"): return skimNumber()
        default: return false
        }
    }

    private mutating func skimLiteral(_ literal: StaticString) -> Bool {
        guard JSONParser.hasLiteral(literal, buffer, at: index) else { return false }
        index += literal.utf8CodeUnitCount
        return true
    }

    private func isDigit(_ i: Int) -> Bool {
        i < buffer.count && buffer[i] >= UInt8(ascii: "0") && buffer[i] <= UInt8(ascii: "9")
    }

    private mutating func skimNumber() -> Bool {
        let start = index
        if buffer[index] == UInt8(ascii: "-") { index += 1 }
        guard isDigit(index) else { return false }
        let integerStart = index
        if buffer[index] == UInt8(ascii: "0") {
            index += 1
        } else {
            while isDigit(index) { index += 1 }
        }
        // Only an exponent or more than 308 integer digits can leave a double's range,
        // so only those ask the parser's range check (which makes a String).
        var mayOverflow = index - integerStart > 308
        if index < buffer.count, buffer[index] == UInt8(ascii: ".") {
            index += 1
            guard isDigit(index) else { return false }
            while isDigit(index) { index += 1 }
        }
        if index < buffer.count, buffer[index] == UInt8(ascii: "e") || buffer[index] == UInt8(ascii: "E") {
            mayOverflow = true
            index += 1
            if index < buffer.count, buffer[index] == UInt8(ascii: "+") || buffer[index] == UInt8(ascii: "-") { index += 1 }
            guard isDigit(index) else { return false }
            while isDigit(index) { index += 1 }
        }
        return !mayOverflow || JSONParser.numberIsFinite(buffer, start..<index)
    }

    /// Skims a string starting at its opening quote: the span between the quotes, or nil
    /// where `JSONParser` would throw (control character, bad escape, unpaired
    /// surrogate, invalid UTF-8, no closing quote).
    mutating func skimString() -> StringSpan? {
        // Strings are most of an event's bytes (a Bird event's "data" is often JSON
        // inside a string): plain bytes are skipped eight at a time, then one at a time
        // up to the next quote, backslash or control byte, which alone take a branch.
        var i = index &+ 1
        let start = i
        let count = buffer.count
        let base = UnsafeRawPointer(buffer.baseAddress!)
        var escaped = false
        var utf8 = UTF8Validator()
        var runStart = i
        var runBits: UInt8 = 0  // OR of the run's bytes: its high bit says "not ASCII"
        while true {
            // Eight bytes a load; the first special byte of a word ends the skip right
            // there (JSON inside a string has a `\"` every few bytes, so runs are short).
            while i &+ 8 <= count {
                let special = Self.specialBytes(base.loadUnaligned(fromByteOffset: i, as: UInt64.self))
                if special == 0 { i &+= 8; continue }
                i &+= special.trailingZeroBitCount &>> 3
                break
            }
            while i < count {
                let byte = buffer[i]
                if byte < 0x20 || byte == UInt8(ascii: "\"") || byte == UInt8(ascii: "\\") { break }
                runBits |= byte
                i &+= 1
            }
            guard i < count, buffer[i] >= 0x20 else { index = i; return nil }
            if buffer[i] == UInt8(ascii: "\\"), runBits < 0x80, i &+ 1 < count, Self.isOneByteEscape(buffer[i &+ 1]) {
                // `\"`, `\\`, `\n` and the like inside an ASCII run: skipped in place (JSON
                // inside a string is full of them); the run stays ASCII.
                escaped = true
                i &+= 2
                continue
            }
            // Raw bytes before a quote or an escape must be complete UTF-8 on their own:
            // an escape always decodes to whole characters.
            guard runBits < 0x80 || checkRun(runStart, i, &utf8) else { index = i; return nil }
            if buffer[i] == UInt8(ascii: "\"") {
                index = i &+ 1
                return StringSpan(start: start, end: i, escaped: escaped)
            }
            escaped = true
            index = i
            guard skimEscape() else { return nil }
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
    @inline(__always) static func specialBytes(_ word: UInt64) -> UInt64 {
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

    private func checkRun(_ from: Int, _ to: Int, _ utf8: inout UTF8Validator) -> Bool {
        utf8.reset()
        return utf8.feed(UnsafeBufferPointer(rebasing: buffer[from..<to])) && utf8.isComplete
    }

    /// Skims `\x` at `index`, as `JSONParser.parseString` accepts it.
    private mutating func skimEscape() -> Bool {
        index += 1
        guard index < buffer.count else { return false }
        let escape = buffer[index]
        index += 1
        switch escape {
        case UInt8(ascii: "\""), UInt8(ascii: "\\"), UInt8(ascii: "/"), UInt8(ascii: "b"),
             UInt8(ascii: "f"), UInt8(ascii: "n"), UInt8(ascii: "r"), UInt8(ascii: "t"):
            return true
        case UInt8(ascii: "u"):
            guard let scalar = hex4() else { return false }
            if scalar >= 0xD800 && scalar < 0xDC00 {
                guard index + 1 < buffer.count, buffer[index] == UInt8(ascii: "\\"),
                      buffer[index + 1] == UInt8(ascii: "u") else { return false }
                index += 2
                guard let low = hex4(), low >= 0xDC00 && low < 0xE000 else { return false }
                return true
            }
            return !(scalar >= 0xDC00 && scalar < 0xE000)
        default:
            return false
        }
    }

    private mutating func hex4() -> UInt32? {
        guard let value = JSONParser.hex4(buffer, at: index) else { return nil }
        index += 4
        return value
    }
}
