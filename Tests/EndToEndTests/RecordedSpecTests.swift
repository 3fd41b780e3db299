import Foundation
import Glibc
import Testing
import TestSupport

/// A capture carries the spec it was recorded under (its header's `spec`), and `analyze`
/// judges it by that spec without flags; flags given on the command line win. (The demo's
/// own capture is checked this way in `DemoTests`.)
@Suite struct RecordedSpecTests {
    /// `Captures/server-pong-missing.jsonl` with `spec` added to its header: the sample's
    /// expected verdict needs `--pong-timeout 0.5`; without it, 30 s, the client is blamed.
    func sampleWithRecordedSpec(_ spec: String) throws -> String {
        let text = try String(contentsOfFile: TestEnvironment.path("Captures/server-pong-missing.jsonl"), encoding: .utf8)
        let header = try #require(text.split(separator: "\n", maxSplits: 1).first)
        #expect(header.hasSuffix("}"))
        let path = TestEnvironment.temporaryDirectory("faultline-recorded-spec").appendingPathComponent("capture.jsonl").path
        try (header.dropLast() + ",\"spec\":\(spec)}" + text.dropFirst(header.count)).write(toFile: path, atomically: true, encoding: .utf8)
        return path
    }

    @Test func analyzeUsesTheRecordedSpecAndSaysSo() throws {
        let capture = try sampleWithRecordedSpec("{\"name\":\"bird\",\"pong_timeout_us\":500000}")
        let recorded = try runFaultline(["analyze", capture])
        let flagged = try runFaultline(["analyze", capture, "--pong-timeout", "0.5"])
        #expect(recorded.status == 0, "\(recorded.stderr)")
        #expect(recorded.stdout.contains("server.pong-missing") && !recorded.stdout.contains("stale.premature-close"), "\(recorded.stdout)")
        #expect(recorded.stdout == flagged.stdout, "the recorded value judges as the flag does")
        #expect(recorded.stderr.split(separator: "\n") == ["faultline analyze: \(capture): judged by the spec it was recorded under: bird --pong-timeout 0.5s; --spec NAME judges it by another"])
        #expect(flagged.stderr.contains("(--pong-timeout from the command line)"), "\(flagged.stderr)")

        // --spec replaces the recorded spec and its values: the default pong timeout again.
        let chosen = try runFaultline(["analyze", capture, "--spec", "bird"])
        #expect(chosen.stdout.contains("stale.premature-close") && !chosen.stdout.contains("server.pong-missing"), "\(chosen.stdout)")
        #expect(chosen.stderr.isEmpty, "\(chosen.stderr)")
    }

    @Test func aRecordedSpecThatCannotBeUsedIsUnusableInput() throws {
        let missing = try sampleWithRecordedSpec("{\"name\":\"/nonexistent/spec.json\"}")
        let run = try runFaultline(["analyze", missing])
        #expect(run.status == 2 && run.stderr.contains("\(missing): the spec it was recorded under, '/nonexistent/spec.json'"), "\(run.stderr)")
        #expect(try runFaultline(["analyze", missing, "--spec", "bird"]).status == 0, "--spec works around it")

        let negative = try sampleWithRecordedSpec("{\"name\":\"bird\",\"pong_timeout_us\":-1}")
        let bad = try runFaultline(["analyze", negative])
        #expect(bad.status == 2 && bad.stderr.contains("\(negative):1") && bad.stderr.contains("spec.pong_timeout_us"), "\(bad.stderr)")
    }

    /// The proxy records its spec options; without any, its header says nothing of a spec.
    @Test func theProxyRecordsItsSpecOptions() throws {
        let directory = TestEnvironment.temporaryDirectory("faultline-proxy-spec")
        func header(_ options: [String]) throws -> [String: Any] {
            let capture = directory.appendingPathComponent("c\(options.count).jsonl").path
            let proxy = try ChildProcess.faultline(["proxy", "--listen", "127.0.0.1:0", "--upstream", "ws://127.0.0.1:9",
                                                    "--record", capture] + options)
            #expect(proxy.waitForLine(timeout: 20) { $0.hasPrefix("listening on ") } != nil, "\(proxy.errorOutput)")
            proxy.signal(SIGINT)
            #expect(proxy.waitForExit(timeout: 20) == 0, "\(proxy.errorOutput)")
            let first = try #require(try String(contentsOfFile: capture, encoding: .utf8).split(separator: "\n").first)
            return try #require(try JSONSerialization.jsonObject(with: Data(first.utf8)) as? [String: Any])
        }
        let plain = try header([])
        #expect(plain["spec"] == nil)
        let tuned = try header(["--pong-timeout", "2", "--resubscribe-window", "250ms"])
        let spec = try #require(tuned["spec"] as? [String: Any])
        #expect(spec["name"] as? String == "bird")
        #expect(spec["pong_timeout_us"] as? Int == 2_000_000 && spec["resubscribe_window_us"] as? Int == 250_000, "\(spec)")
        #expect(spec.count == 3, "\(spec)")
    }
}
