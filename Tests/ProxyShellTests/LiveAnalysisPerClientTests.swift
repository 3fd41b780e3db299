import Capture
import Lifecycle
import Testing
import TestSupport
@testable import ProxyShell

/// `proxy --live` without `--spec` judges each client by the pack detected on it, as
/// `analyze` does on the capture: the records of Captures/mixed-protocols.jsonl (a Bird
/// sim client, python-socketio, gql and pysignalr through one proxy) fed as the proxy
/// would feed them.
@Suite struct LiveAnalysisPerClientTests {
    @Test func eachClientIsJudgedByItsOwnPackLive() throws {
        let bird = try SpecLoader.load("bird")
        let analysis = LiveAnalysis(detecting: bird, transitions: false) { try? SpecLoader.load($0) }
        var lines: [String] = []
        analysis.emit = { lines.append($0) }
        var reader = try CaptureReader(path: TestEnvironment.path("Captures/mixed-protocols.jsonl"))
        while let record = try reader.nextRecord() { analysis.feed(record) }
        analysis.finish()
        // Bird's deviation on client-1, graphql-ws's (by operation id) on client-3.
        #expect(analysis.errors == 3, "\(lines)")
        #expect(lines.filter { $0.contains("client-1") && $0.contains("trigger.unsubscribed") }.count == 2, "\(lines)")
        #expect(lines.contains { $0.contains("client-3") && $0.contains("channels.resubscribe") }, "\(lines)")
        // pysignalr's client-4 closes with 1011 as the capture ends: its retry is still open
        // (undetermined), not a finding.
        #expect(!lines.contains { ($0.contains("client-2") || $0.contains("client-4")) && !$0.contains(" UNDETERMINED ") },
                "no finding on the others: \(lines)")
        #expect(lines.last?.hasPrefix("live analysis (spec bird): 4 clients, 5 connections: 3 errors") == true, "\(lines)")
    }
}
