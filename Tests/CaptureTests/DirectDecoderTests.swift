@testable import Capture
import Foundation
import JSON
import TestSupport
import Testing

/// The direct decoder must give exactly the tree-based decoder's record, or nil (and leave
/// the line, and any error message, to the tree-based decoder).
@Suite struct DirectDecoderTests {
    static func direct(_ line: [UInt8]) -> CaptureRecord? {
        line.withUnsafeBufferPointer { DirectRecordDecoder.decode($0) }
    }

    static func direct(_ line: String) -> CaptureRecord? { direct(Array(line.utf8)) }

    /// Checks the invariant on one line; returns whether the direct path took it.
    @discardableResult
    static func agrees(_ line: [UInt8], sourceLocation: SourceLocation = #_sourceLocation) -> Bool {
        let tree = try? RecordCoding.decode(line)
        guard let record = direct(line) else { return false }
        #expect(record == tree, "\(String(decoding: line, as: UTF8.self))", sourceLocation: sourceLocation)
        return true
    }

    static var sampleCaptures: [URL] {
        let folder = TestEnvironment.repoRoot.appendingPathComponent("Captures")
        let names = (try? FileManager.default.contentsOfDirectory(atPath: folder.path)) ?? []
        return names.filter { $0.hasSuffix(".jsonl") }.sorted().map { folder.appendingPathComponent($0) }
    }

    @Test func everySampleCaptureLineDecodesTheSame() throws {
        #expect(Self.sampleCaptures.count >= 20)
        for url in Self.sampleCaptures {
            let data = try Data(contentsOf: url)
            var records = 0, taken = 0
            for line in data.split(separator: 0x0A) where !line.isEmpty {
                let bytes = Array(line)
                guard !bytes.starts(with: Array(#"{"type":"header""#.utf8)) else { continue }
                records += 1
                if Self.agrees(bytes) { taken += 1 }
            }
            // Every record the writer writes after the header takes the direct path.
            #expect(taken == records, "\(url.lastPathComponent)")
        }
    }

    /// Every sample capture (and the replay sample), read as the analyzer reads it: the
    /// reader's counters say the direct decoder took every record after the header.
    @Test func theReaderDecodesEverySampleRecordDirectly() throws {
        let replay = TestEnvironment.repoRoot.appendingPathComponent("Captures/replay/demo-10s.jsonl")
        for url in Self.sampleCaptures + [replay] {
            var reader = try CaptureReader(path: url.path)
            var records = 0
            while try reader.nextRecord() != nil { records += 1 }
            #expect(records > 0, "\(url.lastPathComponent)")
            #expect(reader.directlyDecoded == records, "\(url.lastPathComponent)")
            #expect(reader.treeDecoded == 0, "\(url.lastPathComponent)")
        }
    }

    @Test("fixture records round-trip through the direct path", arguments: Fixtures.records)
    func fixtures(_ record: CaptureRecord) {
        let line = Array(RecordCoding.encode(record).dropLast())
        let taken = Self.agrees(line)
        if case .header = record { #expect(!taken) } else { #expect(taken) }
    }

    /// Lines the direct path must take, and decode as the tree-based decoder does.
    static let handled: [String] = [
        // Key order does not matter; white space anywhere JSON allows it.
        #"{"t":5,"conn":2,"from":"server","op":1,"type":"frame","masked":false,"text":"hi"}"#,
        #"  { "type" : "frame" , "conn":2 ,"t": 5,"from":"client","op":2,"masked":true,"text":""}  "#,
        "{\"type\":\"frame\",\"conn\":2,\"t\":5,\"from\":\"client\",\"op\":1,\"masked\":true,\"text\":\"x\"}\r",
        // Every escape, \u with surrogate pairs, raw UTF-8.
        #"{"type":"frame","conn":1,"t":0,"from":"client","op":1,"masked":true,"text":"\"\\\/\b\f\n\r\t\u0000\u00e9\u20AC\ud83d\ude00 é 😀"}"#,
        #"{"type":"frame","conn":1,"t":0,"from":"server","op":1,"masked":false,"text":"{\"event\":\"bird:ping\",\"data\":\"{\\\"a\\\":1}\"}"}"#,
        // Numbers: negative, zero, the largest 18-digit values.
        #"{"type":"frame","conn":0,"t":-5,"from":"server","op":0,"len":999999999999999999,"masked":false,"b64":"AAE="}"#,
        #"{"type":"frame","conn":1,"t":-0,"from":"server","op":15,"masked":false}"#,
        // Defaults and every optional key.
        #"{"type":"frame","conn":1,"t":1,"from":"server","op":9}"#,
        #"{"type":"frame","conn":1,"t":1,"from":"client","op":1,"fin":false,"rsv1":true,"rsv2":true,"rsv3":true,"masked":true,"len":3,"compressed":true,"action":"delayed","delay_us":250,"error":"bad \u00e9","fault":"latency:1s","text":"abc"}"#,
        #"{"type":"frame","conn":1,"t":1,"from":"client","op":1,"action":"delayed","text":"a"}"#,
        #"{"type":"frame","conn":1,"t":1,"from":"client","op":1,"action":"injected","delay_us":7,"text":"a"}"#,
        #"{"type":"close","conn":3,"t":9,"from":"server","fin":true,"rsv1":false,"masked":false,"len":5,"action":"forwarded","code":4009,"reason":"bye \u00e9"}"#,
        #"{"type":"close","conn":3,"t":9,"from":"server","masked":false,"code":1000}"#,
        #"{"type":"close","conn":3,"t":9,"from":"server","masked":false}"#,
        #"{"type":"close","conn":3,"t":9,"from":"server","masked":false,"reason":"no code"}"#,
        #"{"type":"close","conn":3,"t":9,"from":"client","masked":true,"b64":"Aw=="}"#,
        #"{"type":"open","conn":1,"t":1250,"client":"127.0.0.1:50123","server":"127.0.0.1:8080","upstream":"x"}"#,
        #"{"type":"open","t":1250,"server":"[::1]:8080","client":"[::1]:1","conn":2}"#,
        #"{"type":"end","conn":1,"t":9,"side":"client","kind":"capture-end","detail":"d\n"}"#,
        #"{"type":"end","conn":1,"t":9,"side":"server","kind":"rst"}"#,
        #"{"type":"end","conn":1,"t":9,"side":"server","kind":"fin","leg":"upstream","detail":"sent by the proxy"}"#,
        #"{"type":"frame","conn":1,"t":1,"from":"server","op":2,"masked":false,"len":70000,"sha256":"ab01","b64":"AAE="}"#,
        // Every other record type after the header, with every key.
        #"{"type":"upgrade","conn":1,"t":1,"from":"client","headers":[]}"#,
        #"{"type":"upgrade","conn":1,"t":1,"from":"client","method":"GET","target":"/app?x=1","headers":[["Host","a"] , [ "X-\u00e9","v\"q"]]}"#,
        #"{"type":"upgrade","conn":1,"t":2,"from":"server","status":101,"reason":"Switching Protocols"}"#,
        #"{"type":"fault","t":1,"rule":"r","kind":"k","detail":"d"}"#,
        #"{"type":"fault","conn":4,"t":1,"rule":"close:4009","kind":"close","target":"client","detail":"sent"}"#,
        #"{"type":"note","t":1,"level":"info","message":"m"}"#,
        #"{"type":"note","conn":2,"t":1,"level":"warning","message":"\u00e9"}"#,
        #"{"type":"tunnel","conn":3,"t":5,"event":"open","client":"c","target":"example.com:443"}"#,
        #"{"type":"tunnel","conn":3,"t":6,"event":"end","target":"example.com:443","bytes_up":10,"bytes_down":20,"detail":"eof"}"#,
        #"{"type":"http","conn":5,"t":1,"t_end":2,"client":"c","method":"POST","url":"http://a/b","req_headers":[["A","b"]],"req_len":2,"req_body":"hi","status":200,"reason":"OK","resp_headers":[],"resp_len":1,"resp_b64":"/w==","error":"e"}"#,
        #"{"type":"http","conn":5,"t":1,"method":"GET","url":"http://a/"}"#,
        // Unusual but allowed: keys of no record type (a newer writer's), null as absent,
        // keys the record type does not read, both payload keys (b64 wins, as in the tree).
        #"{"type":"frame","conn":1,"t":1,"from":"server","op":1,"extra":{"a":[1,2]},"text":"x"}"#,
        #"{"type":"frame","conn":1,"t":1,"from":"server","op":1,"fault":null,"text":"x"}"#,
        #"{"type":"frame","conn":1,"t":1,"from":"server","op":1,"text":"x","b64":"AA=="}"#,
        #"{"type":"frame","conn":1,"t":1,"from":"server","op":1,"code":1000,"text":"x"}"#,
        #"{"type":"close","conn":1,"t":1,"from":"server","op":8,"code":1000}"#,
        #"{"type":"close","conn":1,"t":1,"from":"server","code":1000,"b64":"A+g="}"#,
        #"{"type":"open","conn":1,"t":1,"client":"a","server":"b","from":"client"}"#,
        #"{"type":"frame","conn":1,"t":1234567890123456789,"from":"server","op":1,"text":"x"}"#,
        #"{"type":"frame","conn":-9223372036854775808,"t":1,"from":"server","op":1,"len":9223372036854775807}"#,
    ]

    @Test(arguments: handled)
    func takesWellFormedLines(_ line: String) {
        #expect(Self.agrees(Array(line.utf8)), "\(line)")
    }

    /// Lines the direct path must leave to the tree-based decoder: errors, and shapes it
    /// does not handle (the tree-based decoder still decodes the valid ones).
    static let leftToTheTree: [String] = [
        // The header (line 1, read once by the tree) and types this version does not know.
        #"{"type":"header","format":"faultline-capture","version":1,"tool":"t","started_at_us":0,"source":"s"}"#,
        #"{"type":"frmae","conn":1}"#,
        // Valid, but never written: repeated keys, integers written as fractions or exponents,
        // escaped names.
        #"{"type":"frame","conn":1,"conn":2,"t":1,"from":"server","op":1,"text":"x"}"#,
        #"{"type":"frame","conn":1,"t":1.0,"from":"server","op":1,"text":"x"}"#,
        #"{"type":"frame","conn":1,"t":1e3,"from":"server","op":1,"text":"x"}"#,
        #"{"type":"fr\u0061me","conn":1,"t":1,"from":"server","op":1,"text":"x"}"#,
        #"{"type":"frame","conn":1,"t":1,"from":"server","op":1,"te\u0078t":"x"}"#,
        // Errors: each must keep the tree-based decoder's message.
        #"{"type":"frame","t":1,"from":"server","op":1,"text":"x"}"#,
        #"{"type":"frame","conn":1,"t":1,"from":"nobody","op":1,"text":"x"}"#,
        #"{"type":"frame","conn":1,"t":1,"from":"server","op":16,"text":"x"}"#,
        #"{"type":"frame","conn":1,"t":1,"from":"server","op":1,"action":"lost","text":"x"}"#,
        #"{"type":"frame","conn":"1","t":1,"from":"server","op":1,"text":"x"}"#,
        #"{"type":"frame","conn":1,"t":1,"from":"server","op":1,"fin":"yes","text":"x"}"#,
        #"{"type":"frame","conn":1,"t":1,"from":"server","op":1,"text":"\ud83d"}"#,
        #"{"type":"frame","conn":1,"t":1,"from":"server","op":1,"text":"\ude00"}"#,
        #"{"type":"frame","conn":1,"t":1,"from":"server","op":1,"text":"\ud83d\u0041"}"#,
        #"{"type":"frame","conn":1,"t":1,"from":"server","op":1,"text":"\x"}"#,
        #"{"type":"frame","conn":1,"t":1,"from":"server","op":1,"text":"\u12G4"}"#,
        #"{"type":"frame","conn":1,"t":1,"from":"server","op":1,"text":"\u12"}"#,
        "{\"type\":\"frame\",\"conn\":1,\"t\":1,\"from\":\"server\",\"op\":1,\"text\":\"a\u{1}b\"}",
        #"{"type":"frame","conn":1,"t":1,"from":"server","op":1,"b64":"not base64"}"#,
        #"{"type":"close","conn":1,"t":1,"from":"server","code":70000}"#,
        #"{"type":"end","conn":1,"t":1,"side":"server","kind":"closed"}"#,
        #"{"type":"end","conn":1,"t":1,"side":"server","kind":"fin","leg":"server"}"#,
        #"{"type":"upgrade","conn":1,"t":1,"from":"client","headers":[["Host"]]}"#,
        #"{"type":"upgrade","conn":1,"t":1,"from":"client","headers":{"Host":"a"}}"#,
        #"{"type":"note","t":1,"level":"loud","message":"m"}"#,
        #"{"type":"fault","t":1,"rule":"r","kind":"k"}"#,
        #"{"type":"tunnel","conn":3,"t":5,"event":"middle","target":"x"}"#,
        #"{"type":"http","conn":5,"t":1,"method":"GET","url":"u","req_b64":"%"}"#,
        #"{"type":"frame","conn":01,"t":1,"from":"server","op":1}"#,
        #"{"type":"frame","conn":-,"t":1,"from":"server","op":1}"#,
        #"{"type":"frame","conn":1,"t":1,"from":"server","op":1,"masked":tru}"#,
        #"{"type":"frame","conn":1,"t":1,"from":"server","op":1} x"#,
        #"{"type":"frame","conn":1,"t":1,"from":"server","op":1,}"#,
        #"{"type":"frame","conn":1,"t":1,"from":"server","op":1"#,
        #"{"type":"frame","conn":1,"t":1,"from":"server","op":1,"text":"x"#,
        #"["type","frame"]"#,
        "",
        "{}",
    ]

    @Test(arguments: leftToTheTree)
    func leavesOtherLinesToTheTree(_ line: String) {
        #expect(Self.direct(line) == nil, "\(line)")
    }

    @Test func everyKeyNameIsFound() {
        for key in RecordKey.allCases {
            let line = Array("\"\(key.name)\"".utf8)
            line.withUnsafeBufferPointer {
                var scanner = JSONScanner($0)
                let token = scanner.string()!
                #expect(RecordKey.named(token, in: scanner) == key)
            }
        }
        let other = Array("\"types\"".utf8)
        other.withUnsafeBufferPointer {
            var scanner = JSONScanner($0)
            let token = scanner.string()!
            #expect(RecordKey.named(token, in: scanner) == nil)
        }
    }

    @Test func invalidUTF8IsLeftToTheTree() {
        let prefix = Array(#"{"type":"frame","conn":1,"t":1,"from":"server","op":1,"text":""#.utf8)
        let suffix = Array(#""}"#.utf8)
        // Truncated sequence, overlong, surrogate, above U+10FFFF, stray continuation, and
        // the same next to an escape.
        let bad: [[UInt8]] = [[0xC3], [0xC0, 0xAF], [0xED, 0xA0, 0x80], [0xF4, 0x90, 0x80, 0x80], [0x80],
                              [0xE2, 0x82] + Array(#"\u00ac"#.utf8)]
        for bytes in bad {
            let line = prefix + bytes + suffix
            #expect(Self.direct(line) == nil)
            #expect(throws: RecordDecodingError.self) { try RecordCoding.decode(line) }
        }
        // Valid multi-byte text next to escapes is taken, byte for byte.
        let good = prefix + [0xE2, 0x82, 0xAC] + Array(#"\n\u00e9"#.utf8) + [0xF0, 0x9F, 0x98, 0x80] + suffix
        #expect(Self.agrees(good))
    }

    /// The reader's errors (file, line, offset, message) are the tree-based decoder's.
    /// (A record type the reader does not know is skipped instead: see CaptureReaderTests.)
    @Test func readerErrorsAreUnchanged() throws {
        let header = RecordCoding.encode(.header(CaptureHeader(tool: "t", startedAt: 0, source: "s")))
        for line in Self.leftToTheTree where !line.isEmpty && !line.contains("\"header\"") {
            let bytes = Array(line.utf8)
            let expected: String?
            do {
                _ = try RecordCoding.decode(bytes)
                expected = nil
            } catch {
                if error.unknownType != nil { continue }
                expected = error.message
            }
            var reader = try CaptureReader(file: "f.jsonl", lines: LineReader(fd: -1, ownsDescriptor: false,
                                                                              prefix: header + bytes + [0x0A]))
            if let expected {
                #expect(throws: CaptureError(file: "f.jsonl", line: 2, offset: Int64(header.count), message: expected)) {
                    try reader.nextRecord()
                }
            } else {
                #expect(try reader.nextRecord() == (try RecordCoding.decode(bytes)))
            }
        }
    }
}
