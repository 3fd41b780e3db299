import Analysis
import CLI
import Foundation
import Lifecycle
import Reports
import Testing
import TestSupport

/// The one analysis run: `--jobs 2` gives `--jobs 1`'s reports byte for byte on every
/// sample input, an input without a connection is refused, and the auth rule says whether
/// the input had any auth to judge.
@Suite struct AnalysisRunTests {
    /// Every sample input `Tools/report-snapshot` covers: captures, pcaps, replay captures.
    static func sampleInputs() throws -> [String] {
        var paths: [String] = []
        for folder in ["Captures", "Captures/pcap", "Captures/replay"] {
            let dir = TestEnvironment.path(folder)
            paths += try FileManager.default.contentsOfDirectory(atPath: dir)
                .filter { $0.hasSuffix(".jsonl") || $0.hasSuffix(".pcap") }.sorted().map { dir + "/" + $0 }
        }
        return paths
    }

    static func report(_ path: String, jobs: Int, spec: String? = nil, appSecret: String? = nil) throws -> AnalysisReport {
        let options = AnalysisOptions(spec: SpecChoice(named: spec), appSecret: appSecret, jobs: jobs)
        return try AnalysisRun(inputs: [path], options: options).run()
    }

    @Test(arguments: [nil, "websocket"] as [String?])
    func twoJobsGiveOneJobsReportsOnEverySampleInput(spec: String?) throws {
        let inputs = try Self.sampleInputs()
        #expect(inputs.count >= 25 && inputs.contains { $0.hasSuffix(".pcap") })
        for path in inputs {
            let one = try Self.report(path, jobs: 1, spec: spec)
            let two = try Self.report(path, jobs: 2, spec: spec)
            #expect(one.connectionCount > 0, "\(path)")
            for format in ReportFormat.allCases {
                #expect(format.render(two) == format.render(one), "\(path) as \(format.rawValue)")
            }
        }
    }

    /// Several inputs in one report, on one thread and on two.
    @Test func severalInputsGiveTheSameReportOnTwoJobs() throws {
        let inputs = Array(try Self.sampleInputs().prefix(3))
        let run = { (jobs: Int) in try AnalysisRun(inputs: inputs, options: AnalysisOptions(jobs: jobs)).run() }
        let one = try run(1)
        #expect(one.clients.map(\.info.id).contains { $0.hasPrefix("3/") })
        #expect(JSONReport.render(try run(2)) == JSONReport.render(one))
    }

    @Test func anInputWithoutAConnectionIsRefusedNamingIt() throws {
        let dir = TestEnvironment.temporaryDirectory("analysis-run")
        let path = dir.appendingPathComponent("empty.jsonl").path
        let header = try String(contentsOfFile: TestEnvironment.path("Captures/clean.jsonl"), encoding: .utf8)
            .split(separator: "\n")[0]
        try (header + "\n").write(toFile: path, atomically: true, encoding: .utf8)
        #expect { _ = try Self.report(path, jobs: 1) } throws: { ($0 as? UsageError)?.message.contains(path) == true }
    }

    /// No subscribe or sign-in with auth (a pcap of plain WebSocket clients): the auth rule
    /// had nothing to check, with or without the secret, so no report lists it as unchecked;
    /// with auth in the input and no secret, the secret is what it needs. The engines that
    /// decode the events say so, on one thread and on two, and per client in a mixed input.
    @Test func theAuthRuleNeedsTheSecretOnlyWhenTheInputCarriedAuth() throws {
        let auth = "channels.auth-signature"
        let plain = TestEnvironment.path("Captures/pcap/websocket-plain.pcap")
        for secret in [nil, "sim-secret"] as [String?] {
            for jobs in [1, 2] {
                let report = try Self.report(plain, jobs: jobs, appSecret: secret)
                #expect(report.unchecked.isEmpty, "jobs \(jobs), secret \(secret ?? "none"): \(report.unchecked)")
                #expect(!TextReport.render(report).contains("not checked"))
                #expect(!JUnitReport.render(report).contains("<skipped"))
            }
        }
        for signed in ["Captures/channels-auth-signature.jsonl", "Captures/mixed-protocols.jsonl"].map(TestEnvironment.path) {
            for jobs in [1, 2] {
                let without = try Self.report(signed, jobs: jobs)
                #expect(without.unchecked == [UncheckedRule(rule: auth, reason: "needs --app-secret to verify signatures")],
                        "\(signed), jobs \(jobs)")
            }
        }
        let with = try Self.report(TestEnvironment.path("Captures/channels-auth-signature.jsonl"), jobs: 2, appSecret: "sim-secret")
        #expect(with.unchecked.isEmpty && with.findings.map(\.rule) == [auth])
    }

    /// Without a spec named or recorded, the protocol table's choice is said on the side.
    @Test func theDetectedSpecIsSaidAndANamedOneIsNot() throws {
        let path = TestEnvironment.path("Captures/clean.jsonl")
        var notices: [String] = []
        let detected = try AnalysisRun(inputs: [path], options: AnalysisOptions()) { notices.append($0) }.run()
        #expect(notices.count == 1 && notices[0].hasPrefix("faultline analyze: spec bird"), "\(notices)")
        #expect(detected.spec.name == "bird")
        notices = []
        let named = try AnalysisRun(inputs: [path], options: AnalysisOptions(spec: SpecChoice(named: "websocket"))) { notices.append($0) }.run()
        #expect(notices.isEmpty && named.spec.name == "websocket")
    }
}
