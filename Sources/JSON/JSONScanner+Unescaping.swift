extension JSONScanner {
    /// `string()` (starting at its opening quote) that writes the string's text (escapes
    /// decoded) as it goes: one pass over the bytes where `string()` then `textBytes` made
    /// two. For the one long string of a capture line, a text frame's payload (a Bird event
    /// is JSON inside it, a `\"` every few bytes, each stopping both passes).
    ///
    /// Gives what `string()` gives (nil exactly where it is nil, the same token and index)
    /// and the text `textBytes` would make of the token, in an array of exactly its size.
    /// `scratch` holds the text on the way: it must have room for the rest of the input
    /// (`bytes.count - index` bytes; the text is never longer, every escape being longer
    /// than what it stands for). Written straight into the array, the array would keep the
    /// room of the escapes (a fifth of a Bird payload) for as long as the frame lives.
    public mutating func stringWithText(scratch: UnsafeMutableBufferPointer<UInt8>) -> (token: StringToken, text: [UInt8])? {
        guard let target = scratch.baseAddress, scratch.count >= bytes.count &- index else { return nil }
        var text = ScratchText(out: target)
        guard let token = scanString(into: &text) else { return nil }
        return (token, Array(UnsafeBufferPointer(start: target, count: text.written)))
    }

    /// `stringWithText(scratch:)` with scratch room of its own (tests, single strings).
    public mutating func stringWithText() -> (token: StringToken, text: [UInt8])? {
        let room = Swift.max(1, bytes.count &- index)
        return withUnsafeTemporaryAllocation(of: UInt8.self, capacity: room) { stringWithText(scratch: $0) }
    }

    /// The one string scan, of `string()` and `stringWithText`: plain ASCII is skipped eight
    /// bytes a load (each word handed to `text` before it is looked at), and each byte that
    /// stops the skip (quote, backslash, control byte, a non-ASCII character) is read once
    /// and handled where it lies; a one-letter escape is checked and written by one lookup
    /// (`oneLetterEscape`; most are `\"`), `\u` checked by `unicodeEscapeEnd`. Specialized for each sink: for
    /// `NoText`, every write is gone.
    @inline(__always)
    mutating func scanString<Text: StringText>(into text: inout Text) -> StringToken? {
        guard let base = bytes.baseAddress else { return nil }
        let count = bytes.count
        let start = index &+ 1
        var i = start
        var escaped = false
        var isASCII = true
        while true {
            let byte: UInt8
            if i &+ 8 <= count {
                let word = UnsafeRawPointer(base + i).loadUnaligned(as: UInt64.self)
                text.store(word)
                let special = Self.specialBytes(word)
                if special == 0 {
                    i &+= 8
                    text.keep(8)
                    continue
                }
                let plain = special.trailingZeroBitCount &>> 3
                i &+= plain
                text.keep(plain)
                byte = base[i]
            } else {
                guard i < count else {
                    index = i
                    return nil
                }
                byte = base[i]
                if byte >= 0x20, byte < 0x80, byte != UInt8(ascii: "\""), byte != UInt8(ascii: "\\") {
                    text.write(byte)
                    i &+= 1
                    continue
                }
            }
            switch byte {
            case UInt8(ascii: "\""):
                index = i &+ 1
                return StringToken(content: start..<i, escaped: escaped, isASCII: isASCII)
            case UInt8(ascii: "\\"):
                escaped = true
                guard i &+ 1 < count else {
                    index = i
                    return nil
                }
                let stands = Self.oneLetterEscape(base[i &+ 1])
                if stands != 0 {
                    text.write(stands)
                    i &+= 2
                } else {
                    guard let next = unicodeEscapeEnd(at: i) else {
                        index = i
                        return nil
                    }
                    text.unicodeEscape(bytes, at: i)
                    i = next
                }
            case 0x80...:
                isASCII = false
                guard let next = Self.utf8CharacterEnd(base, count: count, at: i) else {
                    index = i
                    return nil
                }
                text.copy(base + i, count: next &- i)
                i = next
            default:  // a control byte
                index = i
                return nil
            }
        }
    }
}

/// Where `JSONScanner.scanString` puts a string's text as it scans.
protocol StringText {
    /// Eight input bytes about to be looked at, stored where the text goes on (the scan
    /// then keeps those of them that are plain, and writes over the rest).
    mutating func store(_ word: UInt64)
    /// The first `count` bytes last stored are text.
    mutating func keep(_ count: Int)
    /// One byte of text.
    mutating func write(_ byte: UInt8)
    /// `count` bytes of text from the input (a non-ASCII character).
    mutating func copy(_ source: UnsafePointer<UInt8>, count: Int)
    /// The character of the `\u` escape (validated) whose backslash is at `i`.
    mutating func unicodeEscape(_ source: UnsafeBufferPointer<UInt8>, at i: Int)
}

/// `string()`'s sink: no text.
struct NoText: StringText {
    @inline(__always) func store(_ word: UInt64) {}
    @inline(__always) func keep(_ count: Int) {}
    @inline(__always) func write(_ byte: UInt8) {}
    @inline(__always) func copy(_ source: UnsafePointer<UInt8>, count: Int) {}
    @inline(__always) func unicodeEscape(_ source: UnsafeBufferPointer<UInt8>, at i: Int) {}
}

/// `stringWithText`'s sink: room for the text, written from its start. `written` never
/// passes what the scan has read (every escape is longer than what it stands for), so a
/// word stored at `written` fits wherever a word could be loaded.
struct ScratchText: StringText {
    let out: UnsafeMutablePointer<UInt8>
    var written = 0

    @inline(__always) func store(_ word: UInt64) {
        UnsafeMutableRawPointer(out + written).storeBytes(of: word, as: UInt64.self)
    }
    @inline(__always) mutating func keep(_ count: Int) { written &+= count }
    @inline(__always) mutating func write(_ byte: UInt8) {
        out[written] = byte
        written &+= 1
    }
    @inline(__always) mutating func copy(_ source: UnsafePointer<UInt8>, count: Int) {
        (out + written).update(from: source, count: count)
        written &+= count
    }
    @inline(__always) mutating func unicodeEscape(_ source: UnsafeBufferPointer<UInt8>, at i: Int) {
        written &+= JSONScanner.decodeEscape(source, at: i, to: out + written).written
    }
}
