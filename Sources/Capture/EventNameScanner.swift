import JSON
import WebSocket

/// Finds the Bird/Pusher event name of a text frame (`{"event":"bird:pong",...}`) without
/// building a JSON tree: `faultline frames` asks this of every text frame of captures of
/// gigabytes, and a full parse (every member, every string allocated) was a tenth of its time.
///
/// The answer is exactly `JSONParser.parse(payload)["event"]?.stringValue` for an object: the
/// whole payload is validated against the same grammar as `JSONParser` (strict RFC 8259,
/// its depth limit, UTF-8 checked strings, paired surrogates), so invalid JSON gives nil as
/// the parser's error would, and the first "event" member wins as in `JSONObject`. What the
/// scanner does not decode itself (an escaped key or event value, rare in real traffic) it
/// hands to the full parser, so the answer stays exact.
public enum EventNameScanner {
    /// The value of the object's first "event" member when it is a string; nil when the
    /// payload is not a JSON object, has no such member, or it is not a string.
    public static func eventName(in payload: [UInt8]) -> String? {
        switch find(in: payload) {
        case nil: return nil
        case .span(let range): return String(decoding: payload[range], as: UTF8.self)
        case .decoded(let name): return name
        }
    }

    /// Where the event name is.
    public enum Found: Equatable, Sendable {
        /// The name is these payload bytes exactly: valid UTF-8 between the quotes, with no
        /// escapes (so it can be copied into JSON output as it is).
        case span(Range<Int>)
        /// The name had escapes; this is its decoded value.
        case decoded(String)
    }

    /// The event name's location (see `eventName(in:)`), without making a String for it.
    public static func find(in payload: [UInt8]) -> Found? {
        guard payload.first == UInt8(ascii: "{") else { return nil }
        let outcome = payload.withUnsafeBufferPointer { buffer -> Outcome in
            var scanner = Skimmer(buffer: buffer)
            return scanner.scanTopObject()
        }
        switch outcome {
        case .invalid, .absent: return nil
        case .found(let range): return .span(range)
        case .needsParser:
            return ((try? JSONParser.parse(payload))?["event"]?.stringValue).map { .decoded($0) }
        }
    }

    enum Outcome {
        case invalid
        case absent
        case found(Range<Int>)
        /// An escape in a key or in the event value: the full parser decides.
        case needsParser
    }

    /// A validating JSON skim over bytes that remembers only where the event name is.
    struct Skimmer {
        let buffer: UnsafeBufferPointer<UInt8>
        var index = 0
        var sawEscapeInKey = false

        init(buffer: UnsafeBufferPointer<UInt8>) { self.buffer = buffer }

        /// A string's bytes, and whether it held an escape.
        struct StringSpan {
            var start: Int
            var end: Int
            var escaped: Bool
        }

        mutating func scanTopObject() -> Outcome {
            // The payload starts with "{" (checked by the caller): an object at depth 0.
            index = 1
            var event: StringSpan?
            var eventSeen = false
            var escapedEventValue = false
            skipWhitespace()
            if index < buffer.count, buffer[index] == UInt8(ascii: "}") {
                index += 1
            } else {
                while true {
                    skipWhitespace()
                    guard index < buffer.count, buffer[index] == UInt8(ascii: "\"") else { return .invalid }
                    guard let key = skimString() else { return .invalid }
                    if key.escaped { sawEscapeInKey = true }
                    let isEvent = !eventSeen && !key.escaped && isEventKey(key)
                    skipWhitespace()
                    guard index < buffer.count, buffer[index] == UInt8(ascii: ":") else { return .invalid }
                    index += 1
                    skipWhitespace()
                    if isEvent {
                        eventSeen = true
                        if index < buffer.count, buffer[index] == UInt8(ascii: "\"") {
                            guard let value = skimString() else { return .invalid }
                            if value.escaped { escapedEventValue = true } else { event = value }
                        } else {
                            guard skimValue(depth: 1) else { return .invalid }
                        }
                    } else {
                        guard skimValue(depth: 1) else { return .invalid }
                    }
                    skipWhitespace()
                    guard index < buffer.count else { return .invalid }
                    if buffer[index] == UInt8(ascii: ",") { index += 1; continue }
                    if buffer[index] == UInt8(ascii: "}") { index += 1; break }
                    return .invalid
                }
            }
            skipWhitespace()
            guard index == buffer.count else { return .invalid }
            // An escaped key might spell "event" (and come before the one seen).
            if sawEscapeInKey || escapedEventValue { return .needsParser }
            guard let event else { return .absent }
            return .found(event.start..<event.end)
        }

        private func isEventKey(_ key: StringSpan) -> Bool {
            guard key.end - key.start == 5 else { return false }
            let s = key.start
            return buffer[s] == UInt8(ascii: "e") && buffer[s + 1] == UInt8(ascii: "v") && buffer[s + 2] == UInt8(ascii: "e")
                && buffer[s + 3] == UInt8(ascii: "n") && buffer[s + 4] == UInt8(ascii: "t")
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
            if buffer[index] == UInt8(ascii: "-") { index += 1 }
            guard isDigit(index) else { return false }
            if buffer[index] == UInt8(ascii: "0") {
                index += 1
            } else {
                while isDigit(index) { index += 1 }
            }
            if index < buffer.count, buffer[index] == UInt8(ascii: ".") {
                index += 1
                guard isDigit(index) else { return false }
                while isDigit(index) { index += 1 }
            }
            if index < buffer.count, buffer[index] == UInt8(ascii: "e") || buffer[index] == UInt8(ascii: "E") {
                index += 1
                if index < buffer.count, buffer[index] == UInt8(ascii: "+") || buffer[index] == UInt8(ascii: "-") { index += 1 }
                guard isDigit(index) else { return false }
                while isDigit(index) { index += 1 }
            }
            return true
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
}
