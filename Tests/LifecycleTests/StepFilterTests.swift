import Capture
import Foundation
import Testing
import TestSupport
@testable import Lifecycle

/// `LifecycleRule.observes` and `quietUntil` only save time: handing each step to the rules
/// that observe it and skipping quiet timer checks must give exactly the events of handing
/// every step to every rule and asking every timer rule on every record.
@Suite struct StepFilterTests {
    static var sampleCaptures: [String] {
        let folder = TestEnvironment.repoRoot.appendingPathComponent("Captures")
        let names = (try? FileManager.default.contentsOfDirectory(atPath: folder.path)) ?? []
        return names.filter { $0.hasSuffix(".jsonl") }.sorted().map { folder.appendingPathComponent($0).path }
    }

    /// The secret the sample captures were signed with (Captures/expected.json).
    static let appSecret = "sim-secret"

    static func events(_ path: String, spec: LifecycleSpec, appSecret: String?, shortcuts: Bool) throws -> [AnalysisEvent] {
        var reader = try CaptureReader(path: path)
        var analyzer = LiveAnalyzer(options: AnalyzerOptions(spec: spec, appSecret: appSecret), shortcuts: shortcuts)
        var events: [AnalysisEvent] = []
        var last: Micros = 0
        while let record = try reader.nextRecord() {
            if let t = record.time { last = max(last, t) }
            events += analyzer.feed(record)
        }
        return events + analyzer.finish(at: last)
    }

    @Test(arguments: ["bird", "agora-rtm", "agora-rtm-stream"])
    func filteringChangesNothingOnTheSampleCaptures(_ specName: String) throws {
        #expect(Self.sampleCaptures.count >= 20)
        var spec = try SpecLoader.load(specName)
        // Tight timings too, so the schedule rules find something on the bird captures.
        for tight in [false, true] {
            if tight {
                spec.tolerances.timing = 0
                spec.tolerances.immediate = 0
            }
            for path in Self.sampleCaptures {
                for secret in [nil, Self.appSecret] as [String?] {
                    let filtered = try Self.events(path, spec: spec, appSecret: secret, shortcuts: true)
                    let every = try Self.events(path, spec: spec, appSecret: secret, shortcuts: false)
                    #expect(filtered == every, "\(path) \(specName) tight=\(tight) secret=\(secret ?? "-")")
                }
            }
        }
    }

    @Test func stepKindsSortFramesBySideAndEvent() {
        #expect(StepKinds.singles.count == 7)
        #expect(StepKinds.singles.reduce(StepKinds()) { $0.union($1) } == .all)
        #expect(StepKinds.singles.map { $0.rawValue.trailingZeroBitCount } == Array(0..<7))
    }
}
