extension JSONScanner {
    /// `string()` (starting at its opening quote) that writes the string's text (escapes decoded) as it goes: one pass over
    /// the bytes where `string()` then `textBytes` made two. For the one long string of a
    /// capture line, a text frame's payload (a Bird event is JSON inside it, a `\"` every
    /// few bytes, each stopping both passes).
    ///
    /// Gives what `string()` gives (nil exactly where it is nil, the same token and index)
    /// and the text `textBytes` would make of the token, in an array of exactly its size.
    /// `scratch` holds the text on the way: it must have room for the rest of the input
    /// (`bytes.count - index` bytes; the text is never longer, every escape being longer
    /// than what it stands for). Written straight into the array, the array would keep the
    /// room of the escapes (a fifth of a Bird payload) for as long as the frame lives.
    public mutating func stringWithText(scratch: UnsafeMutableBufferPointer<UInt8>) -> (token: StringToken, text: [UInt8])? {
        guard let target = scratch.baseAddress, scratch.count >= bytes.count &- index else { return nil }
        var written = 0
        guard let token = scanWritingText(to: target, written: &written) else { return nil }
        return (token, Array(UnsafeBufferPointer(start: target, count: written)))
    }

    /// `stringWithText(scratch:)` with scratch room of its own (tests, single strings).
    public mutating func stringWithText() -> (token: StringToken, text: [UInt8])? {
        let room = Swift.max(1, bytes.count &- index)
        return withUnsafeTemporaryAllocation(of: UInt8.self, capacity: room) { stringWithText(scratch: $0) }
    }

    /// The loop of `string()`, storing each plain word at `out + written` before it looks
    /// at it (a word found to hold a special byte is stored whole and overwritten from the
    /// special byte on: `written` never passes what the input has been read up to).
    @inline(__always)
    private mutating func scanWritingText(to out: UnsafeMutablePointer<UInt8>, written o: inout Int) -> StringToken? {
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
                UnsafeMutableRawPointer(out + o).storeBytes(of: word, as: UInt64.self)
                let special = Self.specialBytes(word)
                if special == 0 {
                    i &+= 8
                    o &+= 8
                    continue
                }
                let plain = special.trailingZeroBitCount &>> 3
                i &+= plain
                o &+= plain
                byte = base[i]
            } else {
                guard i < count else {
                    index = i
                    return nil
                }
                byte = base[i]
                if byte >= 0x20, byte < 0x80, byte != UInt8(ascii: "\""), byte != UInt8(ascii: "\\") {
                    out[o] = byte
                    i &+= 1
                    o &+= 1
                    continue
                }
            }
            switch byte {
            case UInt8(ascii: "\""):
                index = i &+ 1
                return StringToken(content: start..<i, escaped: escaped, isASCII: isASCII)
            case UInt8(ascii: "\\"):
                escaped = true
                // A one-letter escape checked and written in one switch (most are `\"`);
                // `\u` the long way, checked by `escapeEnd` as `string()` checks it.
                guard i &+ 1 < count else {
                    index = i
                    return nil
                }
                let letter = base[i &+ 1]
                let stands: UInt8
                switch letter {
                case UInt8(ascii: "\""), UInt8(ascii: "\\"), UInt8(ascii: "/"): stands = letter
                case UInt8(ascii: "n"): stands = 0x0A
                case UInt8(ascii: "t"): stands = 0x09
                case UInt8(ascii: "r"): stands = 0x0D
                case UInt8(ascii: "b"): stands = 0x08
                case UInt8(ascii: "f"): stands = 0x0C
                case UInt8(ascii: "u"):
                    guard let next = escapeEnd(at: i) else {
                        index = i
                        return nil
                    }
                    o &+= Self.decodeEscape(bytes, at: i, to: out + o).written
                    i = next
                    continue
                default:
                    index = i
                    return nil
                }
                out[o] = stands
                o &+= 1
                i &+= 2
            case 0x80...:
                isASCII = false
                guard let next = Self.utf8CharacterEnd(base, count: count, at: i) else {
                    index = i
                    return nil
                }
                (out + o).update(from: base + i, count: next &- i)
                o &+= next &- i
                i = next
            default:  // a control byte
                index = i
                return nil
            }
        }
    }
}
