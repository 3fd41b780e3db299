import Foundation
import Testing
import TestSupport

/// Every sample in Captures/ gives exactly the findings Captures/expected.json lists for it
/// (rule ids and counts, no more and no fewer), with each set of `analyze` flags, and the
/// exit status that follows from their severities.
struct SampleCaptureTests {
    struct Run: CustomTestStringConvertible, Sendable {
        var file: String
        var flags: [String]
        var findings: [String: Int]
        var knownIssue: String?
        var testDescription: String { "\(file) \(flags.joined(separator: " "))" }
    }

    static let captures = TestEnvironment.repoRoot.appendingPathComponent("Captures")

    static func expected() throws -> (runs: [Run], files: Set<String>) {
        let data = try Data(contentsOf: captures.appendingPathComponent("expected.json"))
        let root = try #require(try JSONSerialization.jsonObject(with: data) as? [String: Any])
        let samples = try #require(root["samples"] as? [[String: Any]])
        var runs: [Run] = []
        var files: Set<String> = []
        for sample in samples {
            let file = try #require(sample["file"] as? String)
            files.insert(file)
            for run in try #require(sample["runs"] as? [[String: Any]]) {
                runs.append(Run(file: file, flags: try #require(run["flags"] as? [String]),
                                findings: try #require(run["findings"] as? [String: Int]),
                                knownIssue: sample["known_issue"] as? String))
            }
        }
        return (runs, files)
    }

    static var runs: [Run] { (try? expected().runs) ?? [] }

    @Test func everySampleCaptureIsListed() throws {
        let (runs, files) = try Self.expected()
        #expect(runs.count >= 20)
        let present = try FileManager.default.contentsOfDirectory(atPath: Self.captures.path)
            .filter { $0.hasSuffix(".jsonl") && $0 != "sample-session.jsonl" }
        #expect(Set(present) == files)
    }

    @Test(arguments: runs) func analyzeReportsExactlyTheExpectedFindings(_ run: Run) throws {
        let path = Self.captures.appendingPathComponent(run.file).path
        let result = try runFaultline(["analyze", path, "--format", "json"] + run.flags)
        let report = try #require(try JSONSerialization.jsonObject(with: Data(result.stdout.utf8)) as? [String: Any],
                                  "not JSON: \(result.stdout) \(result.stderr)")
        let findings = try #require(report["findings"] as? [[String: Any]])
        var counts: [String: Int] = [:]
        var errors = 0
        for finding in findings {
            counts[finding["rule"] as? String ?? "?", default: 0] += 1
            if finding["severity"] as? String == "error" { errors += 1 }
        }
        if let issue = run.knownIssue {
            withKnownIssue(Comment(rawValue: issue)) {
                #expect(counts == run.findings)
            }
        } else {
            #expect(counts == run.findings, "\(findings.map { "\($0["rule"] ?? "?"): \($0["message"] ?? "")" })")
            #expect(result.status == (errors > 0 ? 1 : 0))
        }
    }
}
