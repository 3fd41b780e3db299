import Capture
import Foundation
import Lifecycle
import Testing
import TestSupport
@testable import Analysis
import Reports
import Vocabulary

/// `analyze --jobs N` must give the one-thread report byte for byte: the sample captures,
/// analysed on one thread and on several, rendered as JSON and text, compared.
@Suite struct ShardedAnalysisTests {
    static func captures() throws -> [String] {
        let dir = TestEnvironment.path("Captures")
        return try FileManager.default.contentsOfDirectory(atPath: dir).filter { $0.hasSuffix(".jsonl") }.sorted()
            .map { dir + "/" + $0 }
    }

    static func records(_ path: String) throws -> [CaptureRecord] {
        var reader = try CaptureReader(path: path)
        var records: [CaptureRecord] = []
        while let record = try reader.nextRecord() { records.append(record) }
        return records
    }

    static func lastTime(_ records: [CaptureRecord]) -> Micros {
        records.compactMap(\.time).max() ?? 0
    }

    static func oneThread(_ records: [CaptureRecord], _ options: AnalyzerOptions, limits: ReportLimits) -> AnalysisReport {
        var analyzer = LiveAnalyzer(options: options)
        var builder = ReportBuilder(limits: limits)
        for record in records { builder.add(analyzer.feed(record)) }
        builder.add(analyzer.finish(at: lastTime(records)))
        return builder.build(spec: options.spec, inputs: ["x"], grouping: "g", prefix: analyzer.prefix,
                             warnings: analyzer.notes, endTime: lastTime(records))
    }

    static func sharded(_ records: [CaptureRecord], _ options: AnalyzerOptions, jobs: Int, limits: ReportLimits,
                        spentPayloads: SpentPayloads? = nil) -> AnalysisReport {
        let analysis = ShardedAnalysis(options: options, jobs: jobs, limits: limits, spentPayloads: spentPayloads)
        for record in records { analysis.feed(record) }
        let result = analysis.finish(at: lastTime(records))
        return result.builder.build(spec: options.spec, inputs: ["x"], grouping: "g", prefix: result.prefix,
                                    warnings: result.notes, endTime: lastTime(records))
    }

    @Test(arguments: ["bird", "websocket"])
    func everySampleCaptureGivesTheSameReportOnSeveralThreads(spec name: String) throws {
        let spec = try SpecLoader.load(name)
        let options = AnalyzerOptions(spec: spec)
        var compared = 0
        for path in try Self.captures() {
            let records = try Self.records(path)
            let one = Self.oneThread(records, options, limits: .standard)
            for jobs in [2, 3] {
                let many = Self.sharded(records, options, jobs: jobs, limits: .standard)
                #expect(JSONReport.render(many) == JSONReport.render(one), "\(path) with \(jobs) jobs")
                #expect(TextReport.render(many) == TextReport.render(one), "\(path) with \(jobs) jobs")
                compared += 1
            }
        }
        #expect(compared >= 10)
    }

    /// The workers hand each frame's payload back (`SpentPayloads`, for a capture's decode
    /// workers to free) without changing the report, and the bin holds no more than its
    /// limit.
    @Test func payloadsHandedBackLeaveTheReportTheSame() throws {
        let options = AnalyzerOptions(spec: try SpecLoader.load("bird"))
        var handedBack = 0
        for path in try Self.captures() {
            let records = try Self.records(path)
            let one = Self.oneThread(records, options, limits: .standard)
            let bin = SpentPayloads(limit: 64)
            let many = Self.sharded(records, options, jobs: 2, limits: .standard, spentPayloads: bin)
            #expect(JSONReport.render(many) == JSONReport.render(one), "\(path)")
            #expect(bin.count <= 64)
            handedBack += bin.count + bin.refused
        }
        #expect(handedBack > 0)
    }

    /// Tight limits: which findings are kept depends on their order, across clients.
    @Test func trimmedReportsKeepTheSameFindingsOnSeveralThreads() throws {
        let options = AnalyzerOptions(spec: try SpecLoader.load("bird"))
        let limits = ReportLimits(head: 1, tail: 1)
        for path in try Self.captures() {
            let records = try Self.records(path)
            let one = Self.oneThread(records, options, limits: limits)
            let many = Self.sharded(records, options, jobs: 2, limits: limits)
            #expect(JSONReport.render(many) == JSONReport.render(one), "\(path)")
        }
    }

    /// Several inputs in one report: the second input's clients and findings follow the first's.
    @Test func severalInputsMergeInInputOrder() throws {
        let paths = try Self.captures().prefix(3)
        let options = { (i: Int) in AnalyzerOptions(spec: try SpecLoader.load("bird"), clientIDPrefix: "\(i + 1)/") }
        var builder = ReportBuilder()
        var parts: [ReportBuilder] = []
        var steps = 0
        var clients = 0
        for (i, path) in paths.enumerated() {
            let records = try Self.records(path)
            var analyzer = LiveAnalyzer(options: try options(i))
            for record in records { builder.add(analyzer.feed(record)) }
            builder.add(analyzer.finish(at: Self.lastTime(records)))
            let analysis = ShardedAnalysis(options: try options(i), jobs: 2, firstStep: steps, firstOrdinal: clients)
            for record in records { analysis.feed(record) }
            parts.append(analysis.finish(at: Self.lastTime(records)).builder)
            steps = analysis.lastStep
            clients += analysis.clientCount
        }
        let spec = try SpecLoader.load("bird")
        let one = builder.build(spec: spec, inputs: Array(paths), grouping: "g", prefix: nil)
        let many = ReportBuilder.merged(parts).build(spec: spec, inputs: Array(paths), grouping: "g", prefix: nil)
        #expect(one.clients.count > 2)
        #expect(JSONReport.render(many) == JSONReport.render(one))
    }
}
