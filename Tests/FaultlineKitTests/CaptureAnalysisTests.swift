import FaultlineKit
import Foundation
import Testing
import TestSupport

/// FaultlineKit analyzes any input `faultline analyze` reads, through the same run, and
/// keeps what the findings alone do not say.
@Suite struct CaptureAnalysisTests {
    /// A compressed capture gives the plain one's analysis, undetermined checks included.
    @Test func aGzippedCaptureIsAnalyzedAsThePlainOne() throws {
        let plain = TestEnvironment.path("Captures/sample-session.jsonl")
        let zipped = TestEnvironment.temporaryDirectory("kit-analysis").appendingPathComponent("s.jsonl.gz").path
        let gzip = try runCommand("/bin/sh", ["-c", "gzip -c \"$0\" > \"$1\"", plain, zipped])
        #expect(gzip.status == 0, "\(gzip.stderr)")
        let expected = try CaptureAnalysis(path: plain, spec: "bird")
        let analysis = try CaptureAnalysis(path: zipped, spec: "bird")
        #expect(analysis == expected)
        #expect(!analysis.undetermined.isEmpty, "sample-session ends with checks still open")
        #expect(analysis.notChecked.contains { $0.hasPrefix("channels.auth-signature: needs --app-secret") }, "\(analysis.notChecked)")
    }

    /// A pcap: its clients without protocol events are said to be judged at connection level,
    /// and with no auth in it, no rule needs the app secret.
    @Test func aPcapIsAnalyzedWithItsConnectionLevelNotes() throws {
        let analysis = try CaptureAnalysis(path: TestEnvironment.path("Captures/pcap/websocket-plain.pcap"), spec: "bird")
        #expect(analysis.findings.isEmpty)
        #expect(analysis.warnings.filter { $0.hasSuffix("analyzed at connection level") }.count == 2, "\(analysis.warnings)")
        #expect(analysis.notChecked.isEmpty, "\(analysis.notChecked)")
    }

    @Test func anUnreadableInputIsAThrownErrorNamingIt() {
        #expect { _ = try CaptureAnalysis(path: "/nonexistent/x.jsonl", spec: "bird") } throws: { "\($0)".contains("/nonexistent/x.jsonl") }
        #expect { _ = try CaptureAnalysis(path: TestEnvironment.path("Captures/clean.jsonl"), spec: "no-such-spec") }
            throws: { "\($0)".contains("spec no-such-spec") }
    }
}
