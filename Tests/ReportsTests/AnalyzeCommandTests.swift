import Testing
import Foundation
import Capture
import JSON
import TestSupport

/// Runs the built `faultline analyze` on a capture written with the capture writer.
@Suite struct AnalyzeCommandTests {
    func writeCapture(_ records: [CaptureRecord], name: String) throws -> String {
        let dir = TestEnvironment.temporaryDirectory("analyze")
        let path = dir.appendingPathComponent(name).path
        let writer = try CaptureWriter(path: path, header: CaptureHeader(tool: "test", startedAt: 0, source: "test"))
        for r in records { try writer.append(r) }
        try writer.close()
        return path
    }

    @Test func findingsExitOneAndEveryFormatIsWritten() throws {
        let capture = try writeCapture(sampleRecords(), name: "sample.jsonl")
        let text = try runFaultline(["analyze", capture])
        #expect(text.status == 1)
        #expect(text.stdout.contains("backoff.bound"))
        #expect(text.stdout.contains("summary: 2 clients, 4 connections: 2 errors, 0 warnings"))
        let json = try runFaultline(["analyze", capture, "--format", "json"])
        #expect(json.status == 1)
        let value = try JSONParser.parse(json.stdout)
        #expect(value["summary"]?["errors"]?.intValue == 2)
        let html = URL(fileURLWithPath: capture).deletingLastPathComponent().appendingPathComponent("r.html").path
        let written = try runFaultline(["analyze", capture, "--format", "html", "--output", html])
        #expect(written.status == 1)
        #expect(written.stdout.contains("report: \(html)"))
        let page = try String(contentsOfFile: html, encoding: .utf8)
        #expect(page.components(separatedBy: "<svg class=\"lane\"").count == 3)
    }

    @Test func cleanCaptureExitsZeroAndOverridesApply() throws {
        // Only the clean client and the late reconnect: a 5 s tolerance forgives the 4.2 s delay.
        let records = sampleRecords().filter { ($0.connection ?? 0) != 4 && ($0.time ?? 0) < 20_000_000 }
        let capture = try writeCapture(records, name: "clean.jsonl")
        #expect(try runFaultline(["analyze", capture]).status == 1)
        let tolerant = try runFaultline(["analyze", capture, "--tolerance", "5", "--format", "junit"])
        #expect(tolerant.status == 0)
        #expect(tolerant.stdout.contains("<testsuites"))
        // Agora expects exactly 2 s before the first attempt: 4.2 s is off by more than 0.5 s.
        #expect(try runFaultline(["analyze", capture, "--spec", "agora-rtm"]).stdout.contains("agora.backoff-schedule"))
        #expect(try runFaultline(["analyze", capture, "--spec", "agora-rtm", "--tolerance", "5"]).status == 0)
    }

    @Test func unusableInputOrOptionsExitTwoNamingTheProblem() throws {
        let capture = try writeCapture(sampleRecords(), name: "x.jsonl")
        let missing = try runFaultline(["analyze", "/nonexistent/cap.jsonl"])
        #expect(missing.status == 2)
        #expect(missing.stderr.contains("/nonexistent/cap.jsonl"))
        let spec = try runFaultline(["analyze", capture, "--spec", "/nonexistent/spec.json"])
        #expect(spec.status == 2)
        #expect(spec.stderr.contains("--spec") && spec.stderr.contains("/nonexistent/spec.json"))
        let key = try runFaultline(["analyze", capture, "--client-key", "cookie:x"])
        #expect(key.status == 2)
        #expect(key.stderr.contains("--client-key"))
        let tolerance = try runFaultline(["analyze", capture, "--tolerance", "soon"])
        #expect(tolerance.status == 2)
        #expect(tolerance.stderr.contains("--tolerance"))
    }

    @Test func severalInputsShareOneReportWithPrefixedClients() throws {
        let a = try writeCapture(sampleRecords(), name: "a.jsonl")
        let b = try writeCapture(sampleRecords(), name: "b.jsonl")
        let run = try runFaultline(["analyze", a, b, "--format", "json"])
        #expect(run.status == 1)
        let value = try JSONParser.parse(run.stdout)
        let ids = value["clients"]?.arrayValue?.compactMap { $0["id"]?.stringValue }
        #expect(ids == ["1/client-1", "1/client-2", "2/client-1", "2/client-2"])
        #expect(value["summary"]?["errors"]?.intValue == 4)
    }
}
