import JSON

/// Finds where a few members of a JSON object are, without building a tree: one pass of
/// `JSONScanner`, which validates exactly `JSONParser`'s grammar, so invalid JSON is refused
/// as the parser would refuse it, and the first member of a name wins as in `JSONObject`.
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
        var scanner = JSONScanner(bytes)
        return scanTopObject(&scanner, keys)
    }

    /// `members(of:named:)` over an array's bytes.
    public static func members<Bytes: Collection<UInt8>>(of bytes: Bytes, named keys: [StaticString]) -> Outcome {
        bytes.withContiguousStorageIfAvailable { members(of: $0, named: keys) } ?? members(of: Array(bytes), named: keys)
    }

    /// Whether `bytes` is one valid JSON text (as `JSONParser` would accept it).
    public static func isValid(_ bytes: UnsafeBufferPointer<UInt8>) -> Bool { JSONScanner.isValid(bytes) }

    private static func scanTopObject(_ scanner: inout JSONScanner, _ keys: [StaticString]) -> Outcome {
        scanner.skipWhitespace()
        guard scanner.consume(UInt8(ascii: "{")) else { return .notAnObject }
        // An object at depth 0: its members' values at depth 1, as the parser counts.
        var found = Members()
        var seen: UInt8 = 0
        var sawEscapeInKey = false
        scanner.skipWhitespace()
        if !scanner.consume(UInt8(ascii: "}")) {
            while true {
                scanner.skipWhitespace()
                guard scanner.current == UInt8(ascii: "\""), let key = scanner.shortString() else { return .notAnObject }
                if key.escaped { sawEscapeInKey = true }
                var wanted = -1
                for (i, name) in keys.enumerated() where seen & (1 << i) == 0 && scanner.matches(key, name) {
                    wanted = i
                    break
                }
                scanner.skipWhitespace()
                guard scanner.consume(UInt8(ascii: ":")) else { return .notAnObject }
                scanner.skipWhitespace()
                let valueStart = scanner.index
                if wanted >= 0, scanner.current == UInt8(ascii: "\"") {
                    guard let value = scanner.string() else { return .notAnObject }
                    found.set(wanted, Span(range: valueStart..<scanner.index, isString: true, escaped: value.escaped))
                } else {
                    guard scanner.skipValue(depth: 1) else { return .notAnObject }
                    if wanted >= 0 { found.set(wanted, Span(range: valueStart..<scanner.index, isString: false, escaped: false)) }
                }
                if wanted >= 0 { seen |= 1 << wanted }
                scanner.skipWhitespace()
                if scanner.consume(UInt8(ascii: ",")) { continue }
                guard scanner.consume(UInt8(ascii: "}")) else { return .notAnObject }
                break
            }
        }
        guard scanner.isAtEndAfterWhitespace() else { return .notAnObject }
        // An escaped key might spell a wanted name (and come before the one seen).
        return sawEscapeInKey ? .needsParser : .members(found)
    }
}
