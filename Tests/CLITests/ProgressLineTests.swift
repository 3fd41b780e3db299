@testable import CLI
import Glibc
import Testing

/// The progress line's text, and its silence off a terminal.
@Suite struct ProgressLineTests {
    @Test func bytesOfTotalRateAndTimeLeft() {
        #expect(ProgressLine.text(label: "analyze", done: 400_000_000, total: 1_000_000_000, elapsed: 4)
                == "analyze: 400.0 MB of 1.0 GB (40%), 100.0 MB/s, 6 s left")
        #expect(ProgressLine.text(label: "export", done: 1500, total: nil, elapsed: 1) == "export: 1.5 KB, 1.5 KB/s")
        #expect(ProgressLine.text(label: "synth", done: 10, total: 10, elapsed: 0) == "synth: 10 B of 10 B (100%), 0 B/s")
        #expect(ProgressLine.text(label: "x", done: 2_000, total: 1_000, elapsed: 1) == "x: 2.0 KB of 1.0 KB (100%), 2.0 KB/s")
    }

    @Test func nothingWhenNotATerminal() {
        var fds: [Int32] = [0, 0]
        #expect(pipe(&fds) == 0)
        defer { close(fds[0]); close(fds[1]) }
        #expect(ProgressLine(label: "analyze", fd: fds[1]) { (0, nil) } == nil)
    }
}
