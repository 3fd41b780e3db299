@testable import Analysis
import Foundation
import Reports
import Testing
import TestSupport

/// `--jobs 2` against `--jobs 1` on inputs long enough that every hand-off batch of the
/// sharded analysis is filled, emptied and filled again (`StepBatch`), and
/// a pcap's rounds are merged many times: a `faultline synth` session of clients that
/// reconnect again and again (so each spans many connections, its backoff judged across
/// them) while the other clients' records come between; the same session as a pcap
/// (`faultline export --pcap`). The reports must be the same byte for byte.
@Suite struct ManyBatchesTests {
    /// 40 clients, 16,000 records: some 8,000 steps per worker, more than the
    /// `queueDepth + 2` batches of `batchSize` that each worker's pool holds.
    static let records = 16_000

    static func session() throws -> (capture: String, pcap: String) {
        let dir = TestEnvironment.temporaryDirectory("many-batches")
        let capture = dir.appendingPathComponent("synth.jsonl").path
        let pcap = dir.appendingPathComponent("synth.pcapng").path
        let synth = try runFaultline(["synth", "--out", capture, "--records", "\(records)", "--clients", "40", "--seed", "5"])
        #expect(synth.status == 0, "\(synth.stderr)")
        let export = try runFaultline(["export", capture, "--pcap", pcap])
        #expect(export.status == 0, "\(export.stderr)")
        return (capture, pcap)
    }

    static func report(_ path: String, jobs: Int) throws -> AnalysisReport {
        try AnalysisRun(inputs: [path], options: AnalysisOptions(jobs: jobs)).run()
    }

    @Test func twoJobsGiveOneJobsReportOnALongCaptureAndItsPcap() throws {
        let (capture, pcap) = try Self.session()
        #expect(ShardedAnalysis.batchSize * (ShardedAnalysis.queueDepth + 2) < Self.records / 2)
        for path in [capture, pcap] {
            let one = try Self.report(path, jobs: 1)
            let two = try Self.report(path, jobs: 2)
            // Clients that span many connections: grouping is carried across workers' batches.
            #expect(one.clients.count == 40, "\(path)")
            #expect(one.clients.contains { $0.connections.count >= 5 }, "\(path)")
            #expect(one.findingCount > 0, "\(path)")
            for format in ReportFormat.allCases {
                #expect(format.render(two) == format.render(one), "\(path) as \(format.rawValue)")
            }
        }
    }
}
