import Capture
import Foundation
import Glibc
import Testing
import TestSupport

/// zstd and gzip captures: read by magic bytes, against files made by the real `zstd` and
/// `gzip` tools; written by `CaptureWriter` one zstd frame per flush, so a crash loses at
/// most the last flush.
@Suite struct CompressedCaptureTests {
    /// The fixture records as a plain capture file.
    static func plainCapture() throws -> String {
        let path = Fixtures.temporaryFile()
        let writer = try CaptureWriter(path: path, header: Fixtures.header)
        for record in Fixtures.records.dropFirst() { try writer.append(record) }
        try writer.close()
        return path
    }

    static func shell(_ script: String) throws {
        let result = try runCommand("/bin/sh", ["-c", script])
        #expect(result.status == 0, "\(script): \(result.stderr)")
    }

    static func bytes(_ path: String) throws -> [UInt8] { [UInt8](try Data(contentsOf: URL(fileURLWithPath: path))) }

    static func write(_ bytes: [UInt8], to path: String) { _ = FileManager.default.createFile(atPath: path, contents: Data(bytes)) }

    @Test(arguments: ["zstd -q -c", "zstd -q -19 -c", "gzip -c", "gzip -1 -c"])
    func readsFilesMadeByTheCommandLineTools(compressor: String) throws {
        let plain = try Self.plainCapture()
        let compressed = plain + ".z"
        try Self.shell("\(compressor) '\(plain)' > '\(compressed)'")
        for chunkSize in [3, 64 * 1024] {
            let (records, warnings) = try Fixtures.readAll(compressed, chunkSize: chunkSize)
            #expect(records == Array(Fixtures.records.dropFirst()))
            #expect(warnings.isEmpty)
        }
        #expect(try CaptureReader(path: compressed).header == Fixtures.header)
    }

    @Test(arguments: ["zstd -q -c", "gzip -c"])
    func concatenatedFramesReadAsOneStream(compressor: String) throws {
        // Two frames (members): the header and half the records, then the rest.
        let all = Fixtures.records.dropFirst()
        let half = all.count / 2
        let first = Fixtures.file(Fixtures.headerLine + all.prefix(half).map(Fixtures.line).joined())
        let second = Fixtures.file(all.dropFirst(half).map(Fixtures.line).joined())
        let joined = first + ".joined"
        try Self.shell("{ \(compressor) '\(first)'; \(compressor) '\(second)'; } > '\(joined)'")
        #expect(try Fixtures.readAll(joined).records == Array(all))
    }

    @Test(arguments: ["zstd -q -c", "gzip -c"])
    func truncatedFileReadsUpToTheCutWithAWarning(compressor: String) throws {
        // Many records (zstd blocks hold 128 KiB), so the cut falls well inside the data.
        let lines = (1...20000).map { Fixtures.line(.open(OpenRecord(conn: $0, t: Int64($0), client: "127.0.0.1:\($0)", server: "127.0.0.1:80"))) }
        let plain = Fixtures.file(Fixtures.headerLine + lines.joined())
        let compressed = plain + ".z"
        try Self.shell("\(compressor) '\(plain)' > '\(compressed)'")
        let whole = try Self.bytes(compressed)
        Self.write(Array(whole.prefix(whole.count * 2 / 3)), to: compressed)
        let (records, warnings) = try Fixtures.readAll(compressed)
        // Whatever came out is a prefix of the records, in order, and the cut is reported.
        #expect(records.count > 0 && records.count < 20000)
        for (i, record) in records.enumerated() { #expect(record == .open(OpenRecord(conn: i + 1, t: Int64(i + 1), client: "127.0.0.1:\(i + 1)", server: "127.0.0.1:80"))) }
        #expect(warnings.contains { $0.contains("cut short") }, "\(warnings)")
    }

    @Test(arguments: ["zstd -q -c", "gzip -c"])
    func corruptDataIsAnErrorNamingFileAndOffset(compressor: String) throws {
        let lines = (1...2000).map { Fixtures.line(.open(OpenRecord(conn: $0, t: Int64($0), client: "127.0.0.1:\($0)", server: "127.0.0.1:80"))) }
        let plain = Fixtures.file(Fixtures.headerLine + lines.joined())
        let compressed = plain + ".z"
        try Self.shell("\(compressor) '\(plain)' > '\(compressed)'")
        var bytes = try Self.bytes(compressed)
        // zstd finds a damaged block; gzip's deflate may decode damage into other bytes and
        // only its trailer's CRC-32 tells, so damage that.
        let damaged = compressor.hasPrefix("zstd") ? (bytes.count / 2)..<(bytes.count / 2 + 64) : (bytes.count - 8)..<(bytes.count - 4)
        for i in damaged { bytes[i] ^= 0x5A }
        Self.write(bytes, to: compressed)
        let error = try #require(throws: CaptureError.self) { _ = try Fixtures.readAll(compressed) }
        #expect(error.file == compressed)
        #expect(error.message.contains("corrupt \(compressor.hasPrefix("zstd") ? "zstd" : "gzip") data"), "\(error)")
        #expect(error.message.contains("byte "), "\(error)")
    }

    @Test func writerWritesZstdThatTheToolReads() throws {
        let path = Fixtures.temporaryFile("capture.jsonl.zst")
        let writer = try CaptureWriter(path: path, header: Fixtures.header)
        for (i, record) in Fixtures.records.dropFirst().enumerated() {
            try writer.append(record)
            if i % 5 == 0 { try writer.flush() }   // several frames
        }
        try writer.close()
        #expect(CaptureCompression.detect(try Self.bytes(path)) == .zstd)
        #expect(try Fixtures.readAll(path).records == Array(Fixtures.records.dropFirst()))
        // The zstd tool checks every frame's checksum and gives back the plain capture.
        let plain = path + ".plain"
        try Self.shell("zstd -q -d -c '\(path)' > '\(plain)'")
        #expect(try Fixtures.readAll(plain).records == Array(Fixtures.records.dropFirst()))
        #expect(writer.totals.fileBytes == Int64(try Self.bytes(path).count))
        #expect(writer.totals.bytes == Int64(try Self.bytes(plain).count))
    }

    /// The sans-IO equivalent of kill -9 on a recording proxy: the file as it stands after
    /// some flushes, with more records buffered and a write cut mid-frame.
    @Test func crashLosesAtMostTheLastFlush() throws {
        let path = Fixtures.temporaryFile("capture.jsonl.zst")
        let writer = try CaptureWriter(path: path, header: Fixtures.header)
        let flushed = (1...300).map { CaptureRecord.open(OpenRecord(conn: $0, t: Int64($0), client: "10.0.0.1:\($0)", server: "10.0.0.2:80")) }
        for record in flushed { try writer.append(record) }
        try writer.flush()
        let afterFirstFlush = try Self.bytes(path)
        let torn = (301...600).map { CaptureRecord.open(OpenRecord(conn: $0, t: Int64($0), client: "10.0.0.1:\($0)", server: "10.0.0.2:80")) }
        for record in torn { try writer.append(record) }
        try writer.flush()
        let afterSecondFlush = try Self.bytes(path)
        try writer.close()
        #expect(afterSecondFlush.count > afterFirstFlush.count)
        // Killed before the second flush reached the disk: everything flushed is there.
        let copy = path + ".killed.zst"
        Self.write(afterFirstFlush, to: copy)
        #expect(try Fixtures.readAll(copy) == (flushed, []))
        // Killed in the middle of the second flush's write: the first flush's records, then
        // a prefix of the second's, with a warning about the cut frame.
        for cut in [1, 7, (afterSecondFlush.count - afterFirstFlush.count) / 2, afterSecondFlush.count - afterFirstFlush.count - 1] {
            Self.write(Array(afterSecondFlush.prefix(afterFirstFlush.count + cut)), to: copy)
            let (records, warnings) = try Fixtures.readAll(copy)
            #expect(Array(records.prefix(flushed.count)) == flushed)
            // (Cut in the frame's checksum alone, every record of it may be whole.)
            #expect(records.count <= flushed.count + torn.count)
            #expect(Array(records.dropFirst(flushed.count)) == Array(torn.prefix(records.count - flushed.count)))
            #expect(warnings.contains { $0.contains("cut short") }, "cut \(cut): \(warnings)")
        }
    }

    @Test func magicBytes() {
        #expect(CaptureCompression.detect([0x28, 0xB5, 0x2F, 0xFD, 0]) == .zstd)
        #expect(CaptureCompression.detect([0x50, 0x2A, 0x4D, 0x18]) == .zstd)   // a skippable frame
        #expect(CaptureCompression.detect([0x1F, 0x8B, 8]) == .gzip)
        #expect(CaptureCompression.detect(Array("{\"type\"".utf8)) == nil)
        #expect(CaptureCompression.detect([0xD4, 0xC3, 0xB2, 0xA1]) == nil)       // pcap
        #expect(CaptureCompression.detect([0x28]) == nil)
        #expect(CaptureCompression.forWriting("a.jsonl.zst") == .zstd)
        #expect(CaptureCompression.forWriting("a.jsonl") == nil)
    }

    @Test func garbageAfterTheMagicIsAnErrorNotATrap() throws {
        for head in [[0x28, 0xB5, 0x2F, 0xFD] as [UInt8], [0x1F, 0x8B]] {
            let path = Fixtures.temporaryFile()
            Self.write(head + [UInt8](repeating: 0xEE, count: 100), to: path)
            let error = try #require(throws: CaptureError.self) { _ = try Fixtures.readAll(path) }
            #expect(error.message.contains("corrupt"), "\(error)")
        }
    }
}
