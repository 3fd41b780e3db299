import Foundation
import Testing
import TestSupport

/// The demo, run once, as a user runs it: `Tools/demo --duration 12s`, the README's "run
/// it" command. The script announces its three steps; every part of the scenario shows in
/// the demo's output (the stalled pong's 4201 and immediate reconnect, the 4009 failure
/// without retry, the drop's and the reset's backoff reconnects, the bug's finding), the
/// analysis is printed, and the capture and HTML report are written where it says.
/// `FAULTLINE_DEMO_BUILT` makes the script run the binary this test run already built
/// instead of building a release one, which would cost minutes here.
struct DemoTests {
    static let script = TestEnvironment.path("Tools/demo")
    /// The configuration of the binary under test.
    static let configuration = TestEnvironment.faultlineBinary.contains("/release/") ? "release" : "debug"

    @Test func theDemoRunsAsDesignedAndWritesItsFiles() throws {
        let directory = TestEnvironment.temporaryDirectory("faultline-demo").appendingPathComponent("out").path
        let arguments = ["--duration", "12s", "--out", directory, "--seed", "3"]
        let result = try runCommand(Self.script, arguments, timeout: 150,
                                    environment: ["FAULTLINE_DEMO_BUILT": Self.configuration])
        let out = result.stdout
        #expect(result.status == 0, "\(out)\n\(result.stderr)")
        let steps = result.stderr.split(separator: "\n").filter { $0.hasPrefix("demo: ") }
        #expect(steps == [
            "demo: 1/3 checking the Debian packages and the Python test peers (Tools/setup)",
            "demo: 2/3 using the already-built .build/\(Self.configuration)/faultline (FAULTLINE_DEMO_BUILT)",
            "demo: 3/3 running .build/\(Self.configuration)/faultline demo \(arguments.joined(separator: " "))",
        ], "\(result.stderr)")
        let lines = out.split(separator: "\n").map(String.init)

        // The live view, as it happened.
        #expect(lines.contains { $0.contains("sim client 1: connected -> connecting") && $0.contains("closed 4201") && $0.contains("reconnecting at once") }, "\(out)")
        #expect(lines.contains { $0.contains("sim client 2: connected -> failed") && $0.contains("4009") }, "\(out)")
        #expect(!lines.contains { $0.contains("sim client 2: failed -> ") }, "no retry after 4009: \(out)")
        #expect(lines.contains { $0.contains("sim client 3: connected -> unavailable") && $0.contains("FIN") }, "\(out)")
        #expect(lines.contains { $0.contains("sim client 4: connected -> unavailable") && $0.contains("RST") }, "\(out)")
        #expect(lines.contains { $0.contains("fault injected: close:4009") }, "\(out)")
        #expect(lines.contains { $0.contains("client-5") && $0.contains("ERROR channels.stale-auth") }, "live finding: \(out)")

        // The analysis, then the paths and the verdict.
        #expect(lines.contains { $0.hasPrefix("faultline analyze: spec bird, input ") }, "\(out)")
        #expect(lines.contains { $0.hasPrefix("summary: 5 clients, ") }, "\(out)")
        let capture = (directory as NSString).appendingPathComponent("capture.jsonl")
        let html = (directory as NSString).appendingPathComponent("report.html")
        #expect(lines.contains("capture: \(capture)") && lines.contains("HTML report: \(html)"), "\(out)")
        #expect(lines.filter { $0.hasPrefix("ok   ") }.count == 6 && !lines.contains { $0.hasPrefix("FAIL") }, "\(out)")
        #expect(lines.last == "demo: ran as designed: every fault had its effect and the analyzer caught the bug")

        // The files: the capture analyses to the same findings from the command line,
        // without the demo's flags: its header carries the spec it was recorded under.
        let report = try String(contentsOfFile: html, encoding: .utf8)
        #expect(report.contains("<svg") && report.contains("channels.stale-auth"))
        let analysis = try runFaultline(["analyze", capture, "--format", "json"])
        #expect(analysis.status == 1)
        #expect(analysis.stderr.contains("judged by the spec it was recorded under: bird --pong-timeout 1s --resubscribe-window 3s"), "\(analysis.stderr)")
        let json = try #require(try JSONSerialization.jsonObject(with: Data(analysis.stdout.utf8)) as? [String: Any])
        let findings = try #require(json["findings"] as? [[String: Any]])
        let errors = Set(findings.filter { $0["severity"] as? String == "error" }.compactMap { $0["rule"] as? String })
        #expect(errors == ["channels.stale-auth"], "\(findings)")
        // The stalled pong is the server's, caused by the fault: not client 1's premature close.
        let client1 = Set(findings.filter { $0["client"] as? String == "client-1" }.compactMap { $0["rule"] as? String })
        #expect(client1 == ["server.pong-missing"], "\(findings)")
    }

    @Test func theScriptRefusesAnUnknownConfigurationBeforeAnyStep() throws {
        let result = try runCommand(Self.script, [], timeout: 30, environment: ["FAULTLINE_DEMO_BUILT": "fast"])
        #expect(result.status == 2)
        #expect(result.stderr == "demo: FAULTLINE_DEMO_BUILT must be 'debug' or 'release', not 'fast'", "\(result.stderr)")
    }

    @Test func badOptionsAreRefused() throws {
        let short = try runFaultline(["demo", "--duration", "2s"])
        #expect(short.status == 2 && short.stderr.contains("--duration"), "\(short.stderr)")
        let few = try runFaultline(["demo", "--clients", "2"])
        #expect(few.status == 2 && few.stderr.contains("--clients"), "\(few.stderr)")
    }
}
