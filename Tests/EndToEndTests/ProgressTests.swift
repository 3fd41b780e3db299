import Foundation
import Testing
import TestSupport

/// Long runs show progress on standard error when it is a terminal (a pty, through
/// `script`), and print nothing of it when it is not (a pipe).
@Suite struct ProgressTests {
    @Test func progressOnATerminalAndNoneOnAPipe() throws {
        let directory = TestEnvironment.temporaryDirectory("faultline-progress")
        let capture = directory.appendingPathComponent("big.jsonl").path
        let synth = try runFaultline(["synth", "--out", capture, "--clients", "20", "--size", "2M"])
        #expect(synth.status == 0, "\(synth.stderr)")
        #expect(!synth.stderr.contains("\r") && synth.stderr.hasPrefix("faultline synth: wrote "), "quiet on a pipe: \(synth.stderr)")
        let piped = try runFaultline(["analyze", capture])
        // (Other lines may name the command, "faultline analyze: spec ..."; a progress line starts with "analyze: ".)
        #expect(!piped.stderr.split(separator: "\n").contains { $0.hasPrefix("analyze: ") } && !piped.stderr.contains("\r"), "\(piped.stderr)")

        // On a pty, with the delay before the first line set to 0 (a short run would be silent).
        let command = "FAULTLINE_PROGRESS_DELAY=0 '\(TestEnvironment.faultlineBinary)' analyze '\(capture)' > /dev/null"
        let terminal = try runCommand("/usr/bin/script", ["-q", "-e", "-c", command, "/dev/null"], timeout: 120)
        #expect(terminal.status == 0 || terminal.status == 1, "\(terminal.stderr)")
        let lines = terminal.stdout.components(separatedBy: "\r").map { $0.replacingOccurrences(of: "\u{1B}[K", with: "") }
        let progress = lines.filter { $0.hasPrefix("analyze: ") }
        #expect(!progress.isEmpty, "no progress line on the terminal: \(terminal.stdout.debugDescription)")
        #expect(progress.allSatisfy { $0.contains(" of 2.1 MB (") && $0.contains("/s") }, "\(progress)")
        #expect(terminal.stdout.hasSuffix("\r\u{1B}[K") || terminal.stdout.contains("\r\u{1B}[K\r\n") || terminal.stdout.hasSuffix("\u{1B}[K"),
                "the line is cleared at the end: \(terminal.stdout.suffix(40).debugDescription)")
    }
}
