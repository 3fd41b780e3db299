import Foundation
import Testing
import TestSupport

/// Empty or wrong input is not green: `analyze` and `frames` (with `--all` too) exit 2 with
/// one message naming the input, what it held and what to try, and print nothing else.
@Suite struct EmptyInputTests {
    @Test func aFilterThatKeepsNoWebSocketExitsTwo() throws {
        let pcap = TestEnvironment.path("Captures/pcap/websocket-plain.pcap")
        for command in [["analyze"], ["analyze", "--format", "junit"], ["frames"], ["frames", "--all"]] {
            let run = try runFaultline(command + [pcap, "--filter", "tcp port 1"])
            #expect(run.status == 2, "\(command): \(run.stderr)")
            #expect(run.stdout.isEmpty, "\(command): \(run.stdout)")
            #expect(run.stderr.contains("\(pcap): no WebSocket connection found: no packet passed --filter 'tcp port 1'"), "\(command): \(run.stderr)")
        }
    }

    @Test func aCaptureWithOnlyItsHeaderExitsTwo() throws {
        let text = try String(contentsOfFile: TestEnvironment.path("Captures/clean.jsonl"), encoding: .utf8)
        let path = TestEnvironment.temporaryDirectory("faultline-empty").appendingPathComponent("empty.jsonl").path
        try String(text.prefix { $0 != "\n" } + "\n").write(toFile: path, atomically: true, encoding: .utf8)
        for command in [["analyze"], ["frames", "--all"]] {
            let run = try runFaultline(command + [path])
            #expect(run.status == 2 && run.stdout.isEmpty, "\(command): \(run.stdout) \(run.stderr)")
            #expect(run.stderr.contains("\(path): no connection recorded: the capture holds only its header"), "\(run.stderr)")
        }
    }
}
