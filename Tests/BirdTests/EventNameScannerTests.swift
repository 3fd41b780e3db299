import Bird
import Capture
import JSON
import Protocols
import Testing
import Vocabulary
import WebSocket

/// The scanner must answer exactly what a full parse answers, for valid and invalid JSON.
@Suite struct EventNameScannerTests {
    /// The definition the scanner replaces.
    static func reference(_ payload: [UInt8]) -> String? {
        guard payload.first == UInt8(ascii: "{") else { return nil }
        return (try? JSONParser.parse(payload))?["event"]?.stringValue
    }

    static let cases: [String] = [
        #"{"event":"bird:pong","data":{}}"#,
        #"{"event":"bird:connection_established","data":"{\"socket_id\":\"1.2\",\"activity_timeout\":120}"}"#,
        #"{"data":{"event":"inner"},"event":"outer"}"#,
        #"{"event":"first","event":"second"}"#,
        #"{"event":1,"event":"second"}"#,
        #"{"event":null}"#,
        #"{"event":"caf\u00e9"}"#,
        #"{"ev\u0065nt":"escaped key","event":"plain"}"#,
        #"{"event":"with \"quotes\""}"#,
        #"{"event":"\ud83d\ude00"}"#,
        #"{"event":"\ud83d"}"#,
        #"{"event":"\ude00"}"#,
        #"{"event":"x","n":-0.5e+10,"a":[1,true,false,null,{"b":[]}]}"#,
        #"{"event":"x","n":01}"#,
        #"{"event":"x","n":1.}"#,
        #"{"event":"x","n":-}"#,
        #"{"event":"x","n":1e}"#,
        #"{"event":"x"} "#,
        #"{"event":"x"} x"#,
        #"{"event":"x",}"#,
        #"{"event" : "spaced" , "data" : [ ] }"#,
        #"{}"#,
        #"{"#,
        #"{"event":"unterminated}"#,
        #"{"event":"bad \q escape"}"#,
        "{\"event\":\"x\",\"s\":\"tab\u{09}inside\"}",
        #"{"event":"x","t":tru}"#,
        #"{"event":"x"}{"#,
        "{\"event\":\"ünïcödé\"}",
        "{\"event\":\"x\",\"data\":\"\u{1F600}\"}",
        #"{"event":"x","data":"\/\b\f\n\r\t\\"}"#,
        "[\"event\"]",
        "\"event\"",
    ]

    @Test func agreesWithTheParserOnCraftedPayloads() {
        for text in Self.cases {
            let payload = Array(text.utf8)
            #expect(EventNameScanner.eventName(in: payload) == Self.reference(payload), "\(text)")
        }
    }

    @Test func agreesOnInvalidUTF8InStrings() {
        let bad: [[UInt8]] = [
            Array(#"{"event":""#.utf8) + [0xC3] + Array(#""}"#.utf8),
            Array(#"{"event":"x","d":""#.utf8) + [0xED, 0xA0, 0x80] + Array(#""}"#.utf8),
            Array(#"{"event":"x","d":""#.utf8) + [0xC3] + Array(#"\u00a9"}"#.utf8),
            Array(#"{"event":""#.utf8) + [0xC3, 0xA9] + Array(#""}"#.utf8),
            Array(#"{"event":"x","d":""#.utf8) + [0xFF] + Array(#""}"#.utf8),
        ]
        for payload in bad {
            #expect(EventNameScanner.eventName(in: payload) == Self.reference(payload), "\(payload)")
        }
    }

    @Test func agreesAtTheDepthLimit() {
        for depth in [254, 255, 256, 300] {
            let text = #"{"event":"deep","x":"# + String(repeating: "[", count: depth) + String(repeating: "]", count: depth) + "}"
            let payload = Array(text.utf8)
            #expect(EventNameScanner.eventName(in: payload) == Self.reference(payload), "depth \(depth)")
        }
    }

    /// Every truncation and many one-byte mutations of real event payloads.
    @Test func agreesOnMutatedPayloads() {
        var generator = SeededGenerator(seed: 7)
        let alphabet = Array(#"{}[]":,\ u0123456789abcdefeEtrn.-+ "#.utf8) + [0x00, 0x1F, 0x80, 0xC3, 0xFF]
        for text in Self.cases.prefix(13) {
            let payload = Array(text.utf8)
            for cut in 0...payload.count {
                let prefix = Array(payload[..<cut])
                #expect(EventNameScanner.eventName(in: prefix) == Self.reference(prefix))
            }
            for _ in 0..<400 {
                var mutated = payload
                let position = Int.random(in: 0..<mutated.count, using: &generator)
                let byte = alphabet[Int.random(in: 0..<alphabet.count, using: &generator)]
                switch Int.random(in: 0..<3, using: &generator) {
                case 0: mutated[position] = byte
                case 1: mutated.insert(byte, at: position)
                default: mutated.remove(at: position)
                }
                #expect(EventNameScanner.eventName(in: mutated) == Self.reference(mutated), "\(String(decoding: mutated, as: UTF8.self))")
            }
        }
    }
}

extension EventNameScannerTests {
    /// The eight-bytes-at-a-time skip must stop at a special byte wherever it sits in a word.
    @Test func agreesWithSpecialBytesAtEveryPositionOfLongStrings() {
        let special: [[UInt8]] = [[0x00], [0x1F], [0x22], [0x5C, 0x22], [0x5C], [0x7F], [0x80], [0xC3, 0xA9], [0xC3], [0xFF]]
        for position in 0..<20 {
            for bytes in special {
                var value = Array("abcdefghijklmnopqrstuvwxyz0123".utf8)
                value.insert(contentsOf: bytes, at: position)
                for key in ["event", "data"] {
                    let payload = Array("{\"\(key)\":\"".utf8) + value + Array("\",\"event\":\"tail\"}".utf8)
                    #expect(EventNameScanner.eventName(in: payload) == Self.reference(payload), "\(key) \(position) \(bytes)")
                }
            }
        }
    }
}

extension EventNameScannerTests {
    /// Strings dense with escapes and multi-byte characters put several special bytes in one
    /// eight-byte word; the skip must stop at the first of them every time.
    @Test func agreesOnStringsWithSeveralSpecialBytesPerWord() {
        var generator = SeededGenerator(seed: 11)
        let pieces: [[UInt8]] = [
            Array("a".utf8), Array("xyz".utf8), Array(#"\""#.utf8), Array(#"\\"#.utf8), Array(#"\n"#.utf8),
            Array(#"\u00e9"#.utf8), Array("é".utf8), Array("😀".utf8), [0x80], [0x1F], Array(#"\q"#.utf8),
        ]
        for _ in 0..<3000 {
            var value: [UInt8] = []
            for _ in 0..<Int.random(in: 0..<24, using: &generator) {
                // Mostly valid pieces; the invalid ones (the last three) now and then.
                let limit = Int.random(in: 0..<10, using: &generator) == 0 ? pieces.count : pieces.count - 3
                value += pieces[Int.random(in: 0..<limit, using: &generator)]
            }
            let payload = Array(#"{"data":""#.utf8) + value + Array(#"","event":"e"}"#.utf8)
            #expect(EventNameScanner.eventName(in: payload) == Self.reference(payload), "\(String(decoding: value, as: UTF8.self))")
        }
    }
}
