import Capture
import Foundation
import Glibc
import Testing
import TestSupport

/// The writer's crash guarantee, end to end: `faultline synth --rate` writes through
/// CaptureWriter; SIGKILL it mid-stream; every complete line must read back, followed by a
/// clean end or a torn-tail warning.
@Suite struct CrashSafetyTests {
    @Test func sigkillMidStreamLeavesEveryCompleteRecordReadable() throws {
        let path = Fixtures.temporaryFile("killed.jsonl")
        let child = try ChildProcess.faultline(["synth", "--out", path, "--clients", "5", "--records", "1000000",
                                                "--rate", "3000", "--seed", "7"])
        defer { child.stop() }
        // Bounded wait (generous: the machine may be loaded) until the file holds a good
        // number of records, then kill without warning.
        var size = 0
        let deadline = Date().addingTimeInterval(60)
        while size < 40_000, Date() < deadline {
            usleep(10_000)
            size = (try? FileManager.default.attributesOfItem(atPath: path)[.size] as? Int) ?? 0
        }
        try #require(size >= 40_000, "synth wrote \(size) bytes before the deadline")
        child.signal(SIGKILL)
        #expect(child.waitForExit(timeout: 10) != nil)

        let bytes = try Data(contentsOf: URL(fileURLWithPath: path))
        let completeLines = bytes.split(separator: 0x0A, omittingEmptySubsequences: false).dropLast().count
        let (records, warnings) = try Fixtures.readAll(path)
        // Every newline-terminated line after the header is a record; nothing else failed.
        #expect(records.count == completeLines - 1)
        #expect(records.count > 100)
        if bytes.last == 0x0A {
            #expect(warnings.isEmpty)
        } else {
            #expect(warnings.count == 1)
            #expect(warnings.first?.contains("torn last line") == true)
        }
        // And they are the same records an uninterrupted run with the same seed writes.
        let full = Fixtures.temporaryFile("full.jsonl")
        let run = try runFaultline(["synth", "--out", full, "--clients", "5", "--records", "\(records.count)", "--seed", "7"])
        #expect(run.status == 0)
        #expect(try Array(Fixtures.readAll(full).records.prefix(records.count)) == records)
    }

    @Test func aTornTailWrittenByHandIsReported() throws {
        let path = Fixtures.temporaryFile("synth.jsonl")
        #expect(try runFaultline(["synth", "--out", path, "--records", "50"]).status == 0)
        var bytes = try Data(contentsOf: URL(fileURLWithPath: path))
        let all = try Fixtures.readAll(path).records
        bytes.removeLast(30)  // cut into the last line, as a crash mid-write would
        try bytes.write(to: URL(fileURLWithPath: path))
        let (records, warnings) = try Fixtures.readAll(path)
        #expect(records == Array(all.dropLast()))
        #expect(warnings.count == 1)
    }
}
