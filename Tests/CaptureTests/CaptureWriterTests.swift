import Capture
import Foundation
import Testing

@Suite struct CaptureWriterTests {
    @Test func writesHeaderAtOnceAndRecordsOnClose() throws {
        let path = Fixtures.temporaryFile()
        let writer = try CaptureWriter(path: path, header: Fixtures.header)
        // The header is on disk before any record, so even an empty capture is readable.
        #expect(try CaptureReader(path: path).header == Fixtures.header)
        for record in Fixtures.records.dropFirst() { try writer.append(record) }
        try writer.close()
        #expect(try Fixtures.readAll(path).records == Array(Fixtures.records.dropFirst()))
        #expect(writer.bytesWritten == Int64(try Data(contentsOf: URL(fileURLWithPath: path)).count))
        // Closing twice is harmless; appending after close is an error naming the file.
        try writer.close()
        let error = try #require(throws: CaptureError.self) { try writer.append(Fixtures.records[1]) }
        #expect(error.description.contains(path))
    }

    @Test func flushPutsBufferedRecordsOnDisk() throws {
        let path = Fixtures.temporaryFile()
        let writer = try CaptureWriter(path: path, header: Fixtures.header)
        try writer.append(Fixtures.records[1])
        try writer.flush()
        #expect(try Fixtures.readAll(path).records == [Fixtures.records[1]])
        try writer.close()
    }

    @Test func backgroundTimerFlushesWithoutBeingAsked() throws {
        let path = Fixtures.temporaryFile()
        let writer = try CaptureWriter(path: path, header: Fixtures.header)
        try writer.append(Fixtures.records[2])
        // Bounded wait (not a timing assertion): the record must show up eventually.
        var seen: [CaptureRecord] = []
        let deadline = Date().addingTimeInterval(60)
        while seen.isEmpty, Date() < deadline {
            usleep(10_000)
            seen = try Fixtures.readAll(path).records
        }
        #expect(seen == [Fixtures.records[2]])
        try writer.close()
    }

    @Test func concurrentAppendsNeverInterleaveLines() async throws {
        let path = Fixtures.temporaryFile()
        let writer = try CaptureWriter(path: path, header: Fixtures.header)
        let tasks = 8, perTask = 2_000
        await withTaskGroup(of: Void.self) { group in
            for task in 0..<tasks {
                group.addTask {
                    for i in 0..<perTask {
                        try? writer.append(.note(NoteRecord(conn: task, t: Int64(i), level: .info,
                                                            message: String(repeating: "x", count: i % 300))))
                    }
                }
            }
        }
        try writer.close()
        let records = try Fixtures.readAll(path).records
        #expect(records.count == tasks * perTask)
        for task in 0..<tasks {
            let times = records.compactMap { $0.connection == task ? $0.time : nil }
            #expect(times == (0..<perTask).map { Int64($0) }, "each task's records in its order")
        }
    }

    @Test func cannotCreateIsAClearError() throws {
        let error = try #require(throws: CaptureError.self) {
            try CaptureWriter(path: "/nonexistent-dir/capture.jsonl", header: Fixtures.header)
        }
        #expect(error.description == "/nonexistent-dir/capture.jsonl: cannot create capture file: No such file or directory")
    }
}

@Suite struct CaptureWriterBufferTests {
    /// Records around and far past the buffer limit (the buffer is swapped out, written,
    /// and released when it grew too big) come back whole and in order, small ones between.
    @Test func hugeAndSmallRecordsKeepTheirOrder() throws {
        let path = Fixtures.temporaryFile()
        let writer = try CaptureWriter(path: path, header: Fixtures.header)
        var expected: [CaptureRecord] = []
        let sizes = [10, CaptureWriter.bufferLimit - 200, 3, CaptureWriter.bufferLimit + 7, 5 * CaptureWriter.bufferLimit, 20 * CaptureWriter.bufferLimit, 1, 0]
        for (i, size) in sizes.enumerated() {
            let payload = (0..<size).map { UInt8(truncatingIfNeeded: $0 &* 131 &+ i) }
            let big = CaptureRecord.frame(FrameRecord(conn: 1, t: Int64(i), from: .server, opcode: .binary,
                                                      masked: false, payload: payload))
            let small = CaptureRecord.note(NoteRecord(conn: 1, t: Int64(i), level: .info, message: "after \(i)"))
            for record in [big, small] {
                try writer.append(record)
                expected.append(record)
            }
            if i == 2 { try writer.flush() }
        }
        try writer.close()
        #expect(try Fixtures.readAll(path).records == expected)
        #expect(writer.bytesWritten == Int64(try Data(contentsOf: URL(fileURLWithPath: path)).count))
    }
}
