import Capture
import JSON
import Testing
import Vocabulary
import WebSocket

@Suite struct RecordCodingTests {
    @Test("every record type and shape survives encode then decode", arguments: Fixtures.records)
    func roundTrip(_ record: CaptureRecord) throws {
        let line = RecordCoding.encode(record)
        #expect(line.last == 0x0A)
        #expect(line.dropLast().contains(0x0A) == false, "one record, one line")
        #expect(try RecordCoding.decode(line) == record)
    }

    @Test func linesAreValidJSONWithDocumentedKeys() throws {
        let text = Fixtures.line(Fixtures.records[5])
        let object = try #require(try JSONParser.parse(text).objectValue)
        #expect(object.keys == ["type", "conn", "t", "from", "op", "fin", "rsv1", "masked", "len", "action", "text"])
        #expect(object["type"] == "frame")
        #expect(object["op"] == 1)
        #expect(object["t"] == 4000)
    }

    @Test func binaryPayloadIsBase64AndTextIsInline() throws {
        let binary = try JSONParser.parse(Fixtures.line(.frame(FrameRecord(conn: 1, t: 0, from: .client, opcode: .binary,
                                                                           masked: true, payload: [0xFF, 0x00, 0x80]))))
        #expect(binary["b64"] == "/wCA")
        #expect(binary["text"] == nil)
        let text = try JSONParser.parse(Fixtures.line(.frame(FrameRecord(conn: 1, t: 0, from: .client, opcode: .binary,
                                                                         masked: true, payload: Array("hi".utf8)))))
        #expect(text["text"] == "hi")
        #expect(text["op"] == 2)
    }

    @Test func closeFramesCarryCodeAndReason() throws {
        let close = try JSONParser.parse(Fixtures.line(.frame(FrameRecord(
            conn: 3, t: 9, from: .server, opcode: .close, masked: false, payload: [0x0F, 0xA9] + Array("bye".utf8)))))
        #expect(close["type"] == "close")
        #expect(close["code"] == 4009)
        #expect(close["reason"] == "bye")
        #expect(close["op"] == nil)
        // A one-byte body is not a code: kept exactly, as base64.
        let malformed = try JSONParser.parse(Fixtures.line(.frame(FrameRecord(
            conn: 3, t: 9, from: .server, opcode: .close, masked: false, payload: [0x03]))))
        #expect(malformed["code"] == nil)
        #expect(malformed["b64"] == "Aw==")
    }

    @Test func delayedActionWritesDelay() throws {
        let line = try JSONParser.parse(Fixtures.line(Fixtures.records[15]))
        #expect(line["action"] == "delayed")
        #expect(line["delay_us"] == 250_000)
    }

    @Test func unknownTypeIsNamedWithTheExpectedOnes() {
        #expect {
            try RecordCoding.decode(Array(#"{"type":"frmae","conn":1}"#.utf8))
        } throws: { error in
            "\(error)" == #"unknown record type "frmae" (expected one of: open, upgrade, frame, close, end, fault, note, tunnel, http)"#
        }
    }

    @Test("bad lines name the key and what it should be", arguments: [
        (#"{"type":"open","t":1,"client":"a","server":"b"}"#, #"missing key "conn""#),
        (#"{"type":"open","conn":"1","t":1,"client":"a","server":"b"}"#, #"key "conn": expected an integer, found a string"#),
        (#"{"type":"frame","conn":1,"t":1,"from":"proxy","op":1}"#, #"unknown side "proxy""#),
        (#"{"type":"frame","conn":1,"t":1,"from":"client","op":1,"b64":"!!"}"#, #"key "b64": not valid base64"#),
        (#"{"type":"frame","conn":1,"t":1,"from":"client","op":16}"#, #"16 is not an opcode"#),
        (#"{"type":"frame","conn":1,"t":1,"from":"client","op":1,"action":"eaten"}"#, #"unknown action "eaten""#),
        (#"{"type":"end","conn":1,"t":1,"side":"client","kind":"boom"}"#, #"unknown end kind "boom""#),
        (#"[1,2]"#, "expected a JSON object, found an array"),
        (#"{"type":"open","conn":1"#, "not valid JSON"),
        (#"{"conn":1}"#, #"missing key "type""#),
    ])
    func badLines(_ line: String, _ expected: String) {
        #expect {
            try RecordCoding.decode(Array(line.utf8))
        } throws: { error in
            "\(error)".contains(expected)
        }
    }

    @Test func unknownKeysAreIgnoredForForwardCompatibility() throws {
        let record = try RecordCoding.decode(Array(#"{"type":"note","t":5,"level":"info","message":"m","later":{"x":1}}"#.utf8))
        #expect(record == .note(NoteRecord(conn: nil, t: 5, level: .info, message: "m")))
    }
}
