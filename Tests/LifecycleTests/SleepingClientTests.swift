import Capture
import Foundation
import Protocols
import Testing
import TestSupport
@testable import Lifecycle
import Vocabulary

/// Clients put to sleep (`ClientShard`, `SleepingClient`) and rebuilt when they wake must
/// make exactly the events of clients that never slept: a report cannot tell them apart.
@Suite struct SleepingClientTests {
    /// Every event of `records` with clients put to sleep after every step they take
    /// (`maxAwake` 0) for their first `historyLimit` inputs (more than the default, so that
    /// most of every sample client's story is slept through; each wake-up replays them all),
    /// or with the defaults; and how many clients were asleep when the input ended.
    static func run(_ records: [CaptureRecord], spec: LifecycleSpec, appSecret: String? = nil, maxAwake: Int? = nil,
                    historyLimit: Int = 48) -> (events: [AnalysisEvent], asleep: Int) {
        var analyzer = maxAwake.map {
            LiveAnalyzer(options: AnalyzerOptions(spec: spec, appSecret: appSecret), shortcuts: true, maxAwake: $0,
                         historyLimit: historyLimit)
        } ?? LiveAnalyzer(options: AnalyzerOptions(spec: spec, appSecret: appSecret))
        var events: [AnalysisEvent] = []
        var last: Micros = 0
        for record in records {
            if let t = record.time { last = max(last, t) }
            events += analyzer.feed(record)
        }
        let asleep = analyzer.sleepingClients
        return (events + analyzer.finish(at: last), asleep)
    }

    static func records(_ path: String) throws -> [CaptureRecord] {
        var reader = try CaptureReader(path: path)
        var records: [CaptureRecord] = []
        while let record = try reader.nextRecord() { records.append(record) }
        return records
    }

    @Test(arguments: ["bird", "agora-rtm", "agora-rtm-stream", "pusher", "websocket"])
    func sleepingChangesNothingOnTheSampleCaptures(_ specName: String) throws {
        #expect(StepFilterTests.sampleCaptures.count >= 20)
        var spec = try SpecLoader.load(specName)
        var slept = 0
        for tight in [false, true] {
            if tight {
                // Tight timings too, so the timer rules find something and wake sleepers.
                spec.tolerances.timing = 0
                spec.tolerances.immediate = 0
            }
            for path in StepFilterTests.sampleCaptures {
                let records = try Self.records(path)
                for secret in [nil, StepFilterTests.appSecret] as [String?] {
                    let sleeping = Self.run(records, spec: spec, appSecret: secret, maxAwake: 0)
                    let awake = Self.run(records, spec: spec, appSecret: secret)
                    #expect(sleeping.events == awake.events, "\(path) \(specName) tight=\(tight) secret=\(secret ?? "-")")
                    slept += sleeping.asleep
                }
            }
        }
        #expect(slept > 0)
    }

    /// Long seeded sessions with pings answered late or never, closes and drops: clients
    /// asleep between every two records, woken by their records and by due timers.
    @Test(arguments: 1...8)
    func sleepingChangesNothingOnSeededSessions(_ seed: Int) throws {
        let wire = QuietTimerTests.session(seed: UInt64(seed) &* 0x9E37_79B9_7F4A_7C15)
        let spec = try SpecLoader.load("bird")
        let sleeping = Self.run(wire.records, spec: spec, maxAwake: 0)
        let awake = Self.run(wire.records, spec: spec)
        #expect(sleeping.events == awake.events)
        #expect(awake.events.contains { if case .finding = $0 { true } else { false } })
    }

    /// More clients than the default keeps awake, each a connection that is opened, gets a
    /// handshake, and for some a ping never answered: the default analyzer puts most to
    /// sleep, the overdue pings wake them, and the events are those of keeping every timeline.
    @Test func manyShortClientsSleepWithTheDefaults() throws {
        var wire = Wire()
        let count = ClientShard.standardMaxAwake + 900
        for i in 0..<count {
            let at = Double(i) * 0.002
            let conn = wire.connect(at: at, ip: "10.\(i >> 16 & 255).\(i >> 8 & 255).\(i & 255)")
            if i % 3 == 0 { wire.ping(conn, at: at + 0.5) }
            if i % 7 == 0 { wire.end(conn, at: at + 1) }
        }
        // A last client minutes later: the sweeps on the way pass the unanswered pings'
        // deadlines, which wake their sleeping clients.
        wire.connect(at: 300, ip: "10.255.0.1")
        wire.records.sort { ($0.time ?? 0) < ($1.time ?? 0) }
        let spec = try SpecLoader.load("bird")
        let defaults = Self.run(wire.records, spec: spec)
        let neverSleep = Self.run(wire.records, spec: spec, maxAwake: .max)
        #expect(defaults.asleep >= 900)
        #expect(neverSleep.asleep == 0)
        #expect(defaults.events == neverSleep.events)
        #expect(defaults.events.contains { if case .finding = $0 { true } else { false } })
    }

    /// A client's inputs come back from its sleep as they went in: records of every kind
    /// the timeline takes, a frame with its decoded event, and sweeps.
    @Test func inputsComeBackFromSleep() throws {
        var wire = Wire()
        let conn = wire.connect(at: 1, ip: "10.0.0.9")
        wire.subscribe(conn, at: 1.1, "chan")
        wire.fault(conn, at: 1.2, rule: "close code=4009", kind: "close")
        wire.close(conn, at: 1.3, from: .server, code: 4009)
        wire.end(conn, at: 1.4)
        let event = RealtimeEvent(name: "bird:subscribe", channel: "chan", data: nil, rawData: nil, kind: .subscribe)
        var inputs: [ClientInput] = []
        for record in wire.records {
            switch record {
            case .open(let r): inputs.append(.open(r))
            case .upgrade(let r): inputs.append(.upgrade(r))
            case .frame(let r): inputs.append(.frame(r, r.from == .client ? event : nil))
            case .end(let r): inputs.append(.end(r))
            case .fault(let r): inputs.append(.fault(r))
            default: break
            }
            inputs.append(.advance(record.time ?? 0))
        }
        let spec = try SpecLoader.load("bird")
        let plan = RulePlan(spec: spec, shortcuts: true)
        let timeline = ClientTimeline(info: ClientInfo(id: "client-1", key: "k", firstSeen: 0), spec: spec, plan: plan, appSecret: nil)
        let sleeper = try #require(SleepingClient(timeline, inputs: inputs))
        #expect(sleeper.inputs.count == inputs.count)
        for (back, sent) in zip(sleeper.inputs, inputs) { #expect(Self.same(back, sent)) }
    }

    static func same(_ a: ClientInput, _ b: ClientInput) -> Bool {
        switch (a, b) {
        case (.open(let x), .open(let y)): x == y
        case (.upgrade(let x), .upgrade(let y)): x == y
        case (.frame(let x, let e), .frame(let y, let f)): x == y && e == f
        case (.end(let x), .end(let y)): x == y
        case (.fault(let x), .fault(let y)): x == y
        case (.advance(let x), .advance(let y)): x == y
        default: false
        }
    }
}
