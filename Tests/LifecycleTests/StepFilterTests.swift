import Capture
import Foundation
import Testing
import TestSupport
@testable import Lifecycle
import Vocabulary

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

/// Long seeded sessions with the traffic the shortcuts are for (server application events
/// between pings, pongs on time, late or missing, closes and drops, resubscriptions): the
/// events with and without shortcuts must be the same.
@Suite struct QuietTimerTests {
    /// A small deterministic generator (xorshift), so every run sees the same sessions.
    struct Draws {
        var state: UInt64
        mutating func next(_ n: Int) -> Int {
            state ^= state << 13
            state ^= state >> 7
            state ^= state << 17
            return Int(state % UInt64(n))
        }
    }

    static func session(seed: UInt64) -> Wire {
        var draws = Draws(state: seed | 1)
        var wire = Wire()
        for client in 0..<3 {
            var at = Double(client) * 0.37
            for _ in 0..<3 {
                let conn = wire.connect(at: at, ip: "10.0.0.\(client + 1)", missingID: draws.next(12) == 0,
                                        activityTimeout: [nil, 20, 120][draws.next(3)])
                at += 0.05
                if draws.next(2) == 0 { wire.subscribe(conn, at: at, "chan-\(client)"); wire.subscribed(conn, at: at + 0.01, "chan-\(client)") }
                let length = Double(20 + draws.next(200))
                var s = at + 0.1
                while s < at + length {
                    switch draws.next(10) {
                    case 0:
                        wire.ping(conn, at: s)
                        switch draws.next(3) {
                        case 0: wire.pong(conn, at: s + 0.2)
                        case 1: wire.pong(conn, at: s + 40)
                        default: break
                        }
                    case 1:
                        s += Double(draws.next(150))
                    default:
                        wire.server(conn, at: s, #"{"event":"price","channel":"m","data":"{\"p\":1.5}"}"#)
                    }
                    s += Double(draws.next(4)) * 0.5
                }
                switch draws.next(3) {
                case 0: wire.close(conn, at: s, from: .client, code: [1000, 4201, 4009][draws.next(3)])
                case 1: wire.close(conn, at: s, from: .server, code: [4009, 4100, 4200][draws.next(3)])
                default: wire.end(conn, at: s)
                }
                at = s + Double(draws.next(5))
            }
        }
        // Records in time order, as captures are.
        wire.records.sort { ($0.time ?? 0) < ($1.time ?? 0) }
        return wire
    }

    @Test(arguments: 1...12)
    func shortcutsChangeNothing(_ seed: Int) throws {
        let wire = Self.session(seed: UInt64(seed) &* 0x9E37_79B9_7F4A_7C15)
        try Self.expectShortcutsChangeNothing(wire, spec: try SpecLoader.load("bird"))
    }

    /// Runs `wire` with and without the engine's shortcuts: the same events, some findings.
    static func expectShortcutsChangeNothing(_ wire: Wire, spec: LifecycleSpec) throws {
        func run(_ shortcuts: Bool) -> [AnalysisEvent] {
            var analyzer = LiveAnalyzer(options: AnalyzerOptions(spec: spec), shortcuts: shortcuts)
            var events: [AnalysisEvent] = []
            for record in wire.records { events += analyzer.feed(record) }
            return events + analyzer.finish()
        }
        let with = run(true)
        #expect(with == run(false))
        #expect(with.contains { if case .finding = $0 { true } else { false } })
    }

    /// The same under each liveness model and the new policy rules: their `quietUntil`
    /// must never let the engine skip a finding.
    @Test(arguments: 1...4, ["ping-after-silence", "heartbeat", "server-ping"])
    func shortcutsChangeNothingUnderEachLivenessModel(_ seed: Int, _ model: String) throws {
        let wire = Self.session(seed: UInt64(seed) &* 0x9E37_79B9_7F4A_7C15)
        let spec = try PolicyExampleTests.spec(backoff: "equal", stale: model,
                                               rules: LivenessModelTests.staleRules + ["reconnect.missing", "backoff.reset"])
        try Self.expectShortcutsChangeNothing(wire, spec: spec)
    }
}
