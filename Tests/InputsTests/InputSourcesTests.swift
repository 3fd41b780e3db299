import CLI
import Capture
import Glibc
import Inputs
import Testing

/// An input's kind comes from its first bytes, and notes past the limit are counted, not shown.
@Suite struct InputSourcesTests {
    @Test func aCaptureIsRecognizedByItsHeaderNotItsName() {
        #expect(InputSources.isCapture(Array(" {\"type\":\"header\",\"format\":\"faultline-capture\"}\n".utf8)))
        #expect(!InputSources.isCapture(Array("{\"type\":\"header\",\"format\":\"other\"}\n".utf8)))
        #expect(!InputSources.isCapture([0xD4, 0xC3, 0xB2, 0xA1]))
        #expect(!InputSources.isCapture([]))
    }

    @Test func anEmptyFileIsAUsageErrorThatSaysSo() throws {
        var template = Array("/tmp/faultline-inputs-XXXXXX".utf8CString)
        let fd = template.withUnsafeMutableBufferPointer { mkstemp($0.baseAddress!) }
        try #require(fd >= 0)
        close(fd)
        let path = template.withUnsafeBufferPointer { String(cString: $0.baseAddress!) }
        defer { unlink(path) }
        let error = #expect(throws: UsageError.self) { try InputSources.open(path) }
        #expect(error?.message.contains("is empty") == true)
    }

    @Test func aCaptureFileOpensWithItsRecords() throws {
        let path = #filePath.split(separator: "/").dropLast(3).map(String.init).joined(separator: "/")
        var source = try InputSources.open("/" + path + "/Captures/backoff-bound.jsonl")
        #expect(source.header.source.isEmpty == false)
        var count = 0
        while try source.next() != nil { count += 1 }
        #expect(count > 0)
    }

    @Test func notesPastTheLimitAreCountedNotShown() {
        var notes = StreamNotes()
        #expect(notes.take(NoteRecord(conn: nil, t: 0, level: .info, message: "x")) == nil)
        var shown = 0
        for i in 0..<(StreamNotes.limit + 5) {
            if notes.take(NoteRecord(conn: nil, t: 0, level: .warning, message: "gap \(i)")) != nil { shown += 1 }
        }
        #expect(shown == StreamNotes.limit)
        #expect(notes.omittedLine?.hasPrefix("5 more") == true)
    }
}
