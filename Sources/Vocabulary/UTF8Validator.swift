/// Incremental UTF-8 validation: bytes may split a character anywhere (a text message's
/// fragments, or TCP reads). Follows the table in Unicode 15 section 3.9 (table 3-7), so
/// overlong forms, surrogates and code points above U+10FFFF fail at the first byte that
/// makes them impossible, as RFC 6455 8.1 asks ("fail fast").
public struct UTF8Validator: Sendable {
    /// Continuation bytes still owed by the current character.
    private var pending = 0
    /// Allowed range of the next continuation byte (narrower right after some lead bytes).
    private var lower: UInt8 = 0x80
    private var upper: UInt8 = 0xBF
    private var failed = false

    public init() {}

    /// False as soon as the bytes so far cannot be the start of valid UTF-8.
    public mutating func feed<C: Collection>(_ bytes: C) -> Bool where C.Element == UInt8 {
        if failed { return false }
        let done: Bool? = bytes.withContiguousStorageIfAvailable { feed(buffer: $0) }
        if let done { return done }
        return Array(bytes).withUnsafeBufferPointer { feed(buffer: $0) }
    }

    private mutating func feed(buffer: UnsafeBufferPointer<UInt8>) -> Bool {
        var index = 0
        let count = buffer.count
        while index < count {
            let byte = buffer[index]
            index += 1
            if pending == 0 {
                if byte < 0x80 {
                    // ASCII run: the common case for JSON text messages. Eight bytes at a
                    // time while no high bit is set.
                    let base = UnsafeRawPointer(buffer.baseAddress!)
                    while index + 8 <= count,
                          base.loadUnaligned(fromByteOffset: index, as: UInt64.self) & 0x8080_8080_8080_8080 == 0 {
                        index += 8
                    }
                    while index < count, buffer[index] < 0x80 { index += 1 }
                    continue
                }
                switch byte {
                case 0xC2...0xDF: pending = 1; lower = 0x80; upper = 0xBF
                case 0xE0: pending = 2; lower = 0xA0; upper = 0xBF
                case 0xE1...0xEC, 0xEE...0xEF: pending = 2; lower = 0x80; upper = 0xBF
                case 0xED: pending = 2; lower = 0x80; upper = 0x9F
                case 0xF0: pending = 3; lower = 0x90; upper = 0xBF
                case 0xF1...0xF3: pending = 3; lower = 0x80; upper = 0xBF
                case 0xF4: pending = 3; lower = 0x80; upper = 0x8F
                default: failed = true; return false
                }
            } else {
                guard byte >= lower, byte <= upper else { failed = true; return false }
                pending -= 1
                lower = 0x80
                upper = 0xBF
            }
        }
        return true
    }

    /// True when no character is left unfinished (and nothing invalid was seen).
    public var isComplete: Bool { !failed && pending == 0 }

    /// Starts over for the next message.
    public mutating func reset() { self = UTF8Validator() }
}
