import Capture
import Foundation
import Testing

/// `--rotate`: the limit's syntax, the parts' names, when a part ends, and a rotating
/// writer's parts read back in order as the records written, none split or lost.
@Suite struct CaptureRotationTests {
    @Test func parsesSizesAndDurations() {
        #expect(CaptureRotation.parse("100M") == CaptureRotation(.size(100 * 1024 * 1024)))
        #expect(CaptureRotation.parse("100MB") == CaptureRotation(.size(100 * 1024 * 1024)))
        #expect(CaptureRotation.parse("2GiB") == CaptureRotation(.size(2 * 1024 * 1024 * 1024)))
        #expect(CaptureRotation.parse("64K") == CaptureRotation(.size(64 * 1024)))
        #expect(CaptureRotation.parse("1h") == CaptureRotation(.duration(.seconds(3600))))
        #expect(CaptureRotation.parse("10m") == CaptureRotation(.duration(.seconds(600))))
        #expect(CaptureRotation.parse("1.5s") == CaptureRotation(.duration(.milliseconds(1500))))
        for bad in ["", "100", "M", "10x", "1K", "0.5s", "-1h", "1e3M", "nanM", "1h30m", "100 M"] {
            #expect(CaptureRotation.parse(bad) == nil, "\(bad)")
        }
    }

    @Test func partNamesGoBeforeTheCaptureExtensions() {
        #expect(CaptureRotation.partPath("soak.jsonl.zst", part: 1) == "soak.0001.jsonl.zst")
        #expect(CaptureRotation.partPath("/tmp/a.b/soak.jsonl", part: 12) == "/tmp/a.b/soak.0012.jsonl")
        #expect(CaptureRotation.partPath("my.soak.jsonl.gz", part: 3) == "my.soak.0003.jsonl.gz")
        #expect(CaptureRotation.partPath("soak", part: 10000) == "soak.10000")
        #expect(CaptureRotation.partPath("dir.zst/soak", part: 2) == "dir.zst/soak.0002")
    }

    @Test func partEndsOnlyOnceItHoldsRecords() {
        let size = CaptureRotation(.size(1000))
        #expect(!size.isDue(partBytes: 100, headerBytes: 100, adding: 5000, partAge: .zero))
        #expect(!size.isDue(partBytes: 500, headerBytes: 100, adding: 500, partAge: .zero))
        #expect(size.isDue(partBytes: 500, headerBytes: 100, adding: 501, partAge: .zero))
        let age = CaptureRotation(.duration(.seconds(60)))
        #expect(!age.isDue(partBytes: 500, headerBytes: 100, adding: 1, partAge: .seconds(59)))
        #expect(age.isDue(partBytes: 500, headerBytes: 100, adding: 1, partAge: .seconds(60)))
        #expect(!age.isDue(partBytes: 100, headerBytes: 100, adding: 1, partAge: .seconds(600)))
    }

    /// Binary frames of pseudo-random bytes (base64 in the capture), so that even a zstd
    /// capture grows past a few parts.
    static func records(_ range: ClosedRange<Int>) -> [CaptureRecord] {
        var state: UInt64 = 1
        return range.map { i in
            let payload = (0..<(i % 300)).map { _ in
                state = state &* 6364136223846793005 &+ 1442695040888963407
                return UInt8(truncatingIfNeeded: state >> 56)
            }
            return .frame(FrameRecord(conn: 1 + i % 7, t: Int64(i) * 1000, from: .server, opcode: .binary, masked: false, payload: payload))
        }
    }

    @Test(arguments: ["soak.jsonl", "soak.jsonl.zst"])
    func rotatingWriterSplitsBetweenRecords(name: String) throws {
        let path = Fixtures.temporaryFile(name)
        let writer = try CaptureWriter(path: path, header: Fixtures.header, rotation: CaptureRotation(.size(64 * 1024)))
        let written = Self.records(1...3000)
        for (i, record) in written.enumerated() {
            try writer.append(record)
            if i % 100 == 99 { try writer.flush() }
        }
        try writer.close()
        let parts = writer.totals.parts
        #expect(parts >= 3)
        var read: [CaptureRecord] = []
        var recording: String?
        for part in 1...parts {
            let partPath = CaptureRotation.partPath(path, part: part)
            let size = try FileManager.default.attributesOfItem(atPath: partPath)[.size] as? Int ?? 0
            // A part ends before the flush that would take it past the limit.
            #expect(size <= 64 * 1024)
            var reader = try CaptureReader(path: partPath)
            #expect(reader.header.part == part)
            #expect(reader.header.startedAt == Fixtures.header.startedAt)
            #expect(reader.header.settings == Fixtures.header.settings)
            if part == 1 { recording = reader.header.recording }
            #expect(reader.header.recording == recording)
            while let record = try reader.nextRecord() { read.append(record) }
            #expect(reader.warnings.isEmpty)
        }
        #expect(recording?.count == 16)
        #expect(read == written)
        #expect(!FileManager.default.fileExists(atPath: CaptureRotation.partPath(path, part: parts + 1)))
        #expect(!FileManager.default.fileExists(atPath: path))
    }

    @Test func rotationRefusesToOverwriteAnExistingPart() throws {
        let path = Fixtures.temporaryFile("soak.jsonl")
        _ = Fixtures.file("x", name: "unused")
        _ = FileManager.default.createFile(atPath: CaptureRotation.partPath(path, part: 2), contents: Data("old".utf8))
        let writer = try CaptureWriter(path: path, header: Fixtures.header, replacing: false, rotation: CaptureRotation(.size(64 * 1024)))
        var failure: CaptureError?
        for record in Self.records(1...3000) {
            do {
                try writer.append(record)
                try writer.flush()
            } catch {
                failure = error
                break
            }
        }
        #expect(failure?.description.contains("soak.0002.jsonl") == true, "\(String(describing: failure))")
        #expect(try String(contentsOfFile: CaptureRotation.partPath(path, part: 2), encoding: .utf8) == "old")
        try? writer.close()
    }
}
