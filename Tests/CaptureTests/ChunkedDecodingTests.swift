@testable import Capture
import Foundation
import TestSupport
import Testing

/// Decoding on worker threads (`CaptureReader(decodeJobs:)`, runs of whole lines decoded
/// by `RunPipeline`) must read exactly as one thread does: the same records in the same
/// order, the same line numbers, warnings and errors (file, line and byte offset).
@Suite struct ChunkedDecodingTests {
    /// Everything a reader says about a file: each record with the line number it came
    /// from, the error that stopped it (if any), the warnings, and the decoders' counts.
    struct Reading: Equatable {
        var records: [CaptureRecord] = []
        var lines: [Int] = []
        var error: CaptureError?
        var warnings: [String] = []
        var direct = 0
        var tree = 0
    }

    static func read(_ path: String, jobs: Int, runBytes: Int = 256 * 1024, chunkSize: Int = 64 * 1024,
                     maxLineLength: Int = 100 * 1024 * 1024) throws -> Reading {
        var reader = try CaptureReader(path: path, chunkSize: chunkSize, maxLineLength: maxLineLength,
                                       decodeJobs: jobs, decodeRunBytes: runBytes)
        var reading = Reading()
        do {
            while let record = try reader.nextRecord() {
                reading.records.append(record)
                reading.lines.append(reader.lineNumber)
            }
            // Asking again after the end stays at the end.
            #expect(try reader.nextRecord() == nil)
        } catch {
            reading.error = error
        }
        reading.warnings = reader.warnings
        (reading.direct, reading.tree) = (reader.directlyDecoded, reader.treeDecoded)
        return reading
    }

    /// Serial and parallel readings of `path`, with runs small enough that a run holds a
    /// few lines, so that records, warnings and errors fall on run boundaries too.
    static func expectSame(_ path: String, chunkSize: Int = 64 * 1024, maxLineLength: Int = 100 * 1024 * 1024,
                           sourceLocation: SourceLocation = #_sourceLocation) throws {
        let serial = try read(path, jobs: 1, chunkSize: chunkSize, maxLineLength: maxLineLength)
        for (jobs, runBytes) in [(2, 1), (2, 300), (3, 1000), (4, 256 * 1024)] {
            let parallel = try read(path, jobs: jobs, runBytes: runBytes, chunkSize: chunkSize, maxLineLength: maxLineLength)
            #expect(parallel == serial, "jobs \(jobs), runs of \(runBytes) bytes", sourceLocation: sourceLocation)
        }
    }

    @Test func everySampleCaptureReadsTheSameOnSeveralThreads() throws {
        let captures = DirectDecoderTests.sampleCaptures
        #expect(captures.count >= 20)
        for url in captures {
            try Self.expectSame(url.path)
        }
    }

    @Test func aBadLineIsTheSameErrorAtTheSameLineAndByte() throws {
        var text = Fixtures.headerLine
        for record in Fixtures.records.dropFirst() { text += Fixtures.line(record) }
        let badAt = text.utf8.count
        text += "{\"type\":\"frame\",\"conn\":\"one\"}\n"
        for record in Fixtures.records.dropFirst() { text += Fixtures.line(record) }
        let path = Fixtures.file(text)
        let serial = try Self.read(path, jobs: 1)
        let error = try #require(serial.error)
        #expect(error.line == Fixtures.records.count + 1)
        #expect(error.offset == Int64(badAt))
        #expect(serial.records.count == Fixtures.records.count - 1)
        try Self.expectSame(path)
    }

    @Test func unknownTypesWarnOnceEachAtTheirFirstLine() throws {
        var text = Fixtures.headerLine
        for i in 0..<12 {
            text += "{\"type\":\"future\(i % 3)\",\"t\":\(i)}\n"
            text += Fixtures.line(Fixtures.records[1 + i % (Fixtures.records.count - 1)])
            text += i % 4 == 0 ? "  \t\r\n\n" : ""
        }
        let path = Fixtures.file(text)
        let serial = try Self.read(path, jobs: 1)
        #expect(serial.error == nil)
        #expect(serial.warnings.count == 3)
        #expect(serial.records.count == 12)
        try Self.expectSame(path)
    }

    @Test func aTornLastLineIsTheSameWarning() throws {
        let whole = Fixtures.line(Fixtures.records[1])
        let path = Fixtures.file(Fixtures.headerLine + whole + whole + whole.prefix(20))
        let serial = try Self.read(path, jobs: 1)
        #expect(serial.records.count == 2)
        #expect(serial.warnings.count == 1)
        #expect(serial.warnings.first?.contains(":4: torn last line (20 bytes") == true)
        try Self.expectSame(path)
        // A last line without its newline that is whole is a record.
        try Self.expectSame(Fixtures.file(Fixtures.headerLine + whole + whole.dropLast()))
    }

    @Test func anOverlongLineIsTheSameError() throws {
        let path = Fixtures.file(Fixtures.headerLine + Fixtures.line(Fixtures.records[1])
                                 + String(repeating: "x", count: 5000) + "\n" + Fixtures.line(Fixtures.records[1]))
        let serial = try Self.read(path, jobs: 1, chunkSize: 100, maxLineLength: 1000)
        #expect(serial.error?.line == 3)
        #expect(serial.error?.message.contains("longer than 1000 bytes") == true)
        try Self.expectSame(path, chunkSize: 100, maxLineLength: 1000)
    }

    /// A read failure after some whole lines: the lines come first, then the failure, at
    /// the line after them (standard input closed under the reader: read(2) fails EBADF).
    @Test func aReadFailureComesAfterTheLinesBeforeIt() throws {
        let text = Fixtures.headerLine + Fixtures.line(Fixtures.records[1]) + Fixtures.line(Fixtures.records[2])
        for jobs in [1, 2] {
            let lines = LineReader(fd: -1, ownsDescriptor: false, prefix: Array(text.utf8))
            var reader = try CaptureReader(file: "f.jsonl", lines: lines, decodeJobs: jobs, decodeRunBytes: 1 << 20)
            #expect(try reader.nextRecord() == Fixtures.records[1])
            #expect(try reader.nextRecord() == Fixtures.records[2])
            let error = try #require(throws: CaptureError.self) { try reader.nextRecord() }
            #expect(error.line == 4, "jobs \(jobs)")
            #expect(error.offset == Int64(text.utf8.count), "jobs \(jobs)")
            #expect(error.message.hasPrefix("read failed: "), "jobs \(jobs)")
        }
    }

    /// `nextLines` hands out whole lines only, then the bytes after the last newline;
    /// nothing is lost or repeated.
    @Test func lineRunsAreWholeLines() throws {
        var fds: [Int32] = [0, 0]
        #expect(pipe(&fds) == 0)
        let text = "a\n\nbcd\n" + String(repeating: "e", count: 300) + "\nfg\nlast"
        _ = text.withCString { write(fds[1], $0, strlen($0)) }
        close(fds[1])
        let lines = LineReader(fd: fds[0], ownsDescriptor: true, prefix: Array("pre".utf8), chunkSize: 4)
        var runs: [String] = []
        var tail: String?
        while let piece = try lines.nextLines(target: 5) {
            switch piece {
            case .complete(let bytes): runs.append(String(decoding: bytes, as: UTF8.self))
            case .unterminated(let bytes): tail = String(decoding: bytes, as: UTF8.self)
            }
        }
        #expect(runs.joined() + (tail ?? "") == "pre" + text)
        #expect(tail == "last")
        for run in runs { #expect(run.hasSuffix("\n")) }
        // Once 5 bytes are in ("prea\n\nb"), the whole lines among them are one run.
        #expect(runs.first == "prea\n\n")
        #expect(lines.consumed == Int64(3 + text.utf8.count))
    }
}
