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
        for _ in 0..<500 where seen.isEmpty {
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
