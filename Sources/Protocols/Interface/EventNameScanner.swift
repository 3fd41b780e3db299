import JSON

/// Finds the `event` member of a JSON text frame (`{"event":"bird:pong",...}`, the envelope
/// of Pusher-protocol and other JSON-event protocols) without building a JSON tree, so that
/// `faultline frames` can label frames without knowing any protocol entry. `faultline
/// frames` asks this of every text frame of captures of gigabytes: a full parse (every
/// member, every string allocated) was a tenth of its time, and the general member search
/// (`JSONSkimmer`, a table of wanted names matched against every key) still 14% of its
/// instructions.
///
/// The answer is exactly `JSONParser.parse(payload)["event"]?.stringValue` for an object: the
/// whole payload is validated by `JSONScanner` against the same grammar as `JSONParser`
/// (strict RFC 8259, its depth limit, UTF-8 checked strings, paired surrogates), so invalid
/// JSON gives nil as the parser's error would, and the first "event" member wins as in
/// `JSONObject`. One pass over the bytes, no allocation unless the name holds an escape;
/// an escaped key (which might spell "event", rare in real traffic) is handed to the full
/// parser, so the answer stays exact.
public enum EventNameScanner {
    /// The value of the object's first "event" member when it is a string; nil when the
    /// payload is not a JSON object, has no such member, or it is not a string.
    public static func eventName(in payload: [UInt8]) -> String? {
        payload.withUnsafeBufferPointer { bytes in
            switch find(in: bytes) {
            case nil: return nil
            case .span(let range): return String(decoding: UnsafeBufferPointer(rebasing: bytes[range]), as: UTF8.self)
            case .decoded(let name): return name
            }
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
        payload.withUnsafeBufferPointer { find(in: $0) }
    }

    /// `find(in:)` over bytes in memory (the printer holds the payload's pointer already).
    public static func find(in payload: UnsafeBufferPointer<UInt8>) -> Found? {
        guard payload.first == UInt8(ascii: "{") else { return nil }
        var scanner = JSONScanner(payload, at: 1)
        // The first "event" member's value: a string's token, or nil for another value.
        var event: JSONScanner.StringToken?
        var sawEvent = false
        var sawEscapedKey = false
        scanner.skipWhitespace()
        if !scanner.consume(UInt8(ascii: "}")) {
            while true {
                scanner.skipWhitespace()
                guard scanner.current == UInt8(ascii: "\""), let key = scanner.string() else { return nil }
                if key.escaped { sawEscapedKey = true }
                scanner.skipWhitespace()
                guard scanner.consume(UInt8(ascii: ":")) else { return nil }
                scanner.skipWhitespace()
                // The object's members are at depth 1, as the parser counts.
                if !sawEvent, isEventKey(key, in: payload) {
                    sawEvent = true
                    if scanner.current == UInt8(ascii: "\"") {
                        guard let value = scanner.string() else { return nil }
                        event = value
                    } else {
                        guard scanner.skipValue(depth: 1) else { return nil }
                    }
                } else {
                    guard scanner.skipValue(depth: 1) else { return nil }
                }
                scanner.skipWhitespace()
                if scanner.consume(UInt8(ascii: ",")) { continue }
                guard scanner.consume(UInt8(ascii: "}")) else { return nil }
                break
            }
        }
        guard scanner.isAtEndAfterWhitespace() else { return nil }
        // An escaped key might spell "event" (and come before the one seen).
        if sawEscapedKey {
            return ((try? JSONParser.parse(payload))?["event"]?.stringValue).map { .decoded($0) }
        }
        guard let event else { return nil }
        return event.escaped ? .decoded(scanner.text(event)) : .span(event.content)
    }

    /// Whether an unescaped key token is `event`: five bytes compared in place.
    @inline(__always)
    private static func isEventKey(_ key: JSONScanner.StringToken, in bytes: UnsafeBufferPointer<UInt8>) -> Bool {
        guard !key.escaped, key.content.count == 5 else { return false }
        let i = key.content.lowerBound
        return bytes[i] == UInt8(ascii: "e") && bytes[i + 1] == UInt8(ascii: "v") && bytes[i + 2] == UInt8(ascii: "e")
            && bytes[i + 3] == UInt8(ascii: "n") && bytes[i + 4] == UInt8(ascii: "t")
    }
}
