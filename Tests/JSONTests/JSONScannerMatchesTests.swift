import JSON
import Testing

/// `matches` compares eight, then four bytes a load, then byte by byte: names of every
/// length from 1 to 27 (both word sizes, every tail), each against its own spelling, against
/// a spelling with any one byte changed, one byte shorter and longer, escaped, and with
/// the token at the very end of the buffer.
@Suite struct JSONScannerMatchesTests {
    static let names: [StaticString] = [
        "t", "op", "fin", "type", "event", "action", "masked", "delay_us", "forwarded", "compressed",
        "req_headers", "resp_headers", "bird:pong_ok", "subscription_", "private-user-1", "bird:subscribed",
        "connection_state", "bird:connection_e", "subscription_error", "bird:unsubscribe_it",
        "client-event-typing", "bird:signin_success_", "pusher:connection_est", "subscription_succeeded",
        "bird:subscription_count", "bird:member_removed_abcd", "pusher_internal:subscribe", "bird:connection_establish",
        "bird:connection_established",
    ]

    static func text(_ name: StaticString) -> [UInt8] {
        Array(UnsafeBufferPointer(start: name.utf8Start, count: name.utf8CodeUnitCount))
    }

    /// The string token of `"content"` (its quote at `prefix.count`), followed by `after`.
    static func withToken(_ content: [UInt8], prefix: [UInt8] = Array("{\"k\":".utf8), after: [UInt8] = Array("}".utf8),
                          _ body: (JSONScanner, JSONScanner.StringToken) -> Void) {
        let line = prefix + [UInt8(ascii: "\"")] + content + [UInt8(ascii: "\"")] + after
        line.withUnsafeBufferPointer { buffer in
            var scanner = JSONScanner(buffer, at: prefix.count)
            guard let token = scanner.string() else {
                Issue.record("no token in \(String(decoding: line, as: UTF8.self))")
                return
            }
            body(scanner, token)
        }
    }

    @Test(arguments: names.indices)
    func nameAgainstItsSpellingAndEveryNearMiss(_ i: Int) {
        let name = Self.names[i]
        let spelled = Self.text(name)
        Self.withToken(spelled) { scanner, token in #expect(scanner.matches(token, name)) }
        Self.withToken(spelled, after: []) { scanner, token in #expect(scanner.matches(token, name)) }
        for k in spelled.indices {
            var changed = spelled
            changed[k] = changed[k] == UInt8(ascii: "x") ? UInt8(ascii: "y") : UInt8(ascii: "x")
            Self.withToken(changed) { scanner, token in #expect(!scanner.matches(token, name), "byte \(k) of \(name)") }
        }
        Self.withToken(Array(spelled.dropLast())) { scanner, token in #expect(!scanner.matches(token, name)) }
        Self.withToken(spelled + [UInt8(ascii: "s")]) { scanner, token in #expect(!scanner.matches(token, name)) }
        // `\u0074` spells `t`: an escaped token is never a match, whatever its text.
        Self.withToken(Array("\\u0074".utf8) + spelled.dropFirst()) { scanner, token in
            #expect(token.escaped)
            #expect(!scanner.matches(token, name))
        }
    }

    @Test func tokenOutsideTheBufferIsNoMatch() {
        let line = Array("\"event\"".utf8)
        line.withUnsafeBufferPointer { buffer in
            let scanner = JSONScanner(buffer)
            let beyond = JSONScanner.StringToken(content: 3..<8, escaped: false, isASCII: true)
            #expect(!scanner.matches(beyond, "event"))
            let inside = JSONScanner.StringToken(content: 1..<6, escaped: false, isASCII: true)
            #expect(scanner.matches(inside, "event"))
        }
    }
}
