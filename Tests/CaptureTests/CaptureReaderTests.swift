import Capture
import Foundation
import Testing

@Suite struct CaptureReaderTests {
    static var allLines: String { Fixtures.records.map(Fixtures.line).joined() }

    @Test("reads every record back whatever the chunk size", arguments: [1, 2, 3, 7, 64, 4096, 65536])
    func chunkSizes(_ chunkSize: Int) throws {
        let path = Fixtures.file(Self.allLines)
        let (records, warnings) = try Fixtures.readAll(path, chunkSize: chunkSize)
        #expect(records == Array(Fixtures.records.dropFirst()))
        #expect(warnings.isEmpty)
        let reader = try CaptureReader(path: path, chunkSize: chunkSize)
        #expect(reader.header == Fixtures.header)
    }

    @Test func tornLastLineIsAWarningNotAFailure() throws {
        let complete = Self.allLines
        let torn = String(Fixtures.line(Fixtures.records[5]).dropLast(20))
        let path = Fixtures.file(complete + torn)
        let (records, warnings) = try Fixtures.readAll(path, chunkSize: 5)
        #expect(records == Array(Fixtures.records.dropFirst()))
        #expect(warnings.count == 1)
        #expect(warnings.first?.contains("\(path):\(Fixtures.records.count + 1): torn last line") == true)
    }

    @Test func unterminatedButCompleteLastLineIsARecord() throws {
        let path = Fixtures.file(Fixtures.headerLine + String(Fixtures.line(Fixtures.records[1]).dropLast()))
        let (records, warnings) = try Fixtures.readAll(path)
        #expect(records == [Fixtures.records[1]])
        #expect(warnings.isEmpty)
    }

    @Test func blankLinesAreSkipped() throws {
        let path = Fixtures.file(Fixtures.headerLine + "\n  \n" + Fixtures.line(Fixtures.records[1]))
        #expect(try Fixtures.readAll(path).records == [Fixtures.records[1]])
    }

    /// A newer writer's record type (or a typo) is skipped, with one warning naming the
    /// file and the first line of that type; the records around it are read.
    @Test func unknownRecordTypeIsSkippedWithAWarningNamingFileAndLine() throws {
        let good = Fixtures.line(Fixtures.records[1])
        let bad = #"{"type":"frmae","conn":1,"t":5}"# + "\n"
        let path = Fixtures.file(Fixtures.headerLine + good + good + bad + bad + good)
        var reader = try CaptureReader(path: path, chunkSize: 3)
        #expect(try reader.nextRecord() == Fixtures.records[1])
        #expect(try reader.nextRecord() == Fixtures.records[1])
        #expect(try reader.nextRecord() == Fixtures.records[1])
        #expect(try reader.nextRecord() == nil)
        #expect(reader.warnings == [
            #"\#(path):4: record type "frmae" is not one this version reads (open, upgrade, frame, close, end, fault, note, tunnel, http): skipped"#,
        ])
    }

    @Test func aKnownTypeWithABadKeyIsStillAnError() throws {
        let good = Fixtures.line(Fixtures.records[1])
        let bad = #"{"type":"tunnel","conn":1,"t":5,"event":"opened","target":"h:1"}"# + "\n"
        let path = Fixtures.file(Fixtures.headerLine + good + bad)
        var reader = try CaptureReader(path: path, chunkSize: 3)
        #expect(try reader.nextRecord() == Fixtures.records[1])
        let error = try #require(throws: CaptureError.self) { try reader.nextRecord() }
        #expect(error.line == 3)
        #expect(error.offset == Int64(Fixtures.headerLine.utf8.count + good.utf8.count))
        #expect(error.description.contains(#"unknown tunnel event "opened""#))
    }

    @Test func wrongFormatIsRejectedWithWhatWasExpected() throws {
        let path = Fixtures.file(#"{"type":"header","format":"har","version":1,"tool":"x","started_at_us":0,"source":"x"}"# + "\n")
        let error = try #require(throws: CaptureError.self) { try CaptureReader(path: path) }
        #expect(error.line == 1)
        #expect(error.description.hasPrefix("\(path):1: not a faultline capture"))
        #expect(error.description.contains(#"expected "faultline-capture""#))
    }

    @Test func nonJSONFileIsRejected() throws {
        let path = Fixtures.file("hello world\nsecond line\n", name: "hostname")
        let error = try #require(throws: CaptureError.self) { try CaptureReader(path: path) }
        #expect(error.description.hasPrefix("\(path):1: not a faultline capture: not valid JSON"))
    }

    @Test func firstLineMustBeAHeader() throws {
        let path = Fixtures.file(Fixtures.line(Fixtures.records[1]))
        let error = try #require(throws: CaptureError.self) { try CaptureReader(path: path) }
        #expect(error.description.contains("the first line is not a header"))
    }

    @Test func unknownVersionIsRejected() throws {
        var header = Fixtures.header
        header.version = 2
        let path = Fixtures.file(Fixtures.line(.header(header)))
        let error = try #require(throws: CaptureError.self) { try CaptureReader(path: path) }
        #expect(error.line == 1)
        #expect(error.message.hasPrefix("unsupported capture version 2 (expected 1"))
    }

    @Test func emptyAndMissingFiles() throws {
        let empty = try #require(throws: CaptureError.self) { try CaptureReader(path: Fixtures.file("")) }
        #expect(empty.message.hasPrefix("empty file"))
        let missing = try #require(throws: CaptureError.self) { try CaptureReader(path: "/nonexistent/capture.jsonl") }
        #expect(missing.description == "/nonexistent/capture.jsonl: cannot open: No such file or directory")
    }

    @Test func secondHeaderIsAnError() throws {
        let path = Fixtures.file(Fixtures.headerLine + Fixtures.headerLine)
        var reader = try CaptureReader(path: path)
        let error = try #require(throws: CaptureError.self) { try reader.nextRecord() }
        #expect(error.line == 2)
    }

    @Test func overlongLineIsAnErrorNamingTheLine() throws {
        let path = Fixtures.file(Fixtures.headerLine + Fixtures.line(Fixtures.records[1]) + String(repeating: "x", count: 5000) + "\n")
        var reader = try CaptureReader(path: path, chunkSize: 100, maxLineLength: 1000)
        _ = try reader.nextRecord()
        let error = try #require(throws: CaptureError.self) { try reader.nextRecord() }
        #expect(error.line == 3)
        #expect(error.message.contains("longer than 1000 bytes"))
    }

    /// Constant memory: the reader's buffer holds one chunk plus one line, so a file of many
    /// lines read in small chunks never needs more; checked through the line reader directly.
    @Test func lineReaderSplitsAcrossChunks() throws {
        var fds: [Int32] = [0, 0]
        #expect(pipe(&fds) == 0)
        let text = "a\n\nbcd\n" + String(repeating: "e", count: 300) + "\nlast"
        _ = text.withCString { write(fds[1], $0, strlen($0)) }
        close(fds[1])
        let lines = LineReader(fd: fds[0], ownsDescriptor: true, prefix: Array("pre".utf8), chunkSize: 4)
        var got: [String] = []
        while let line = try lines.next() {
            switch line {
            case .complete(let bytes): got.append(String(decoding: bytes, as: UTF8.self))
            case .unterminated(let bytes): got.append("<" + String(decoding: bytes, as: UTF8.self) + ">")
            }
        }
        #expect(got == ["prea", "", "bcd", String(repeating: "e", count: 300), "<last>"])
        #expect(lines.consumed == Int64(3 + text.utf8.count))
    }
}
