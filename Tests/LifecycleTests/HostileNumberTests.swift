import Capture
import Testing
@testable import Lifecycle
import Vocabulary

/// Numbers from a peer or a file that once trapped the analyzer (issue 15, items 1 and 4):
/// each test here crashed the test process before the fix.
@Suite struct HostileNumberTests {
    /// A server's handshake with `activity_timeout` 1e300 trapped the seconds-to-micros
    /// conversion (in `analyze`, and through `--live` in the proxy). It is clamped to the
    /// longest duration a spec can hold: the client owes no ping within the capture.
    @Test func handshakeActivityTimeoutOf1e300IsClamped() throws {
        var wire = Wire()
        let a = wire.connect(at: 0, handshake: false)
        wire.server(a, at: 0.01, #"{"event":"bird:connection_established","data":"{\"socket_id\":\"1.7\",\"activity_timeout\":1e300}"}"#)
        let out = try analyze(wire, end: 100_000)
        #expect(out.findings.isEmpty)
        #expect(out.transitions.last?.to == "connected")
    }

    /// A negative `activity_timeout` means nothing: the spec's default (120 s) stays.
    @Test func negativeHandshakeActivityTimeoutKeepsTheDefault() throws {
        var wire = Wire()
        let a = wire.connect(at: 0, handshake: false)
        wire.server(a, at: 0.01, #"{"event":"bird:connection_established","data":"{\"socket_id\":\"1.7\",\"activity_timeout\":-5e300}"}"#)
        #expect(try analyze(wire, end: 100).findings.isEmpty)
        #expect(try analyze(wire, end: 121).rules() == ["stale.ping-missing"])
    }

    @Test func secondsConversionIsTotal() {
        #expect(micros(seconds: 1.5) == 1_500_000)
        #expect(micros(seconds: .nan) == 0)
        #expect(micros(seconds: 1e300) == micros(seconds: maxDurationSeconds))
        #expect(micros(seconds: -.infinity) == -micros(seconds: maxDurationSeconds))
        #expect(handshakeActivityTimeout(seconds: -1) == nil)
        let clamped: Micros = 1_000_000_000_000_000
        #expect(handshakeActivityTimeout(seconds: 1e300) == clamped)
        #expect(RecordTime.micros(seconds: 1e300) == nil)
        #expect(RecordTime.micros(seconds: .nan) == nil)
        #expect(RecordTime.micros(seconds: 2) == 2_000_000)
    }

    /// A spec with an exponential phase of base 0 and a factor of 1e308: 0 × infinity is
    /// NaN, and `Micros(NaN)` trapped. The bound is the cap of all delays instead.
    @Test func backoffBoundOfZeroTimesInfinityIsTheCap() {
        let phase = LifecycleSpec.BackoffPhase(kind: .exponential, base: 0, factor: 1e308, cap: nil, jitter: .full,
                                               until: nil, state: "connecting", rule: "backoff.bound")
        #expect(phase.bound(attempt: 1) == 0)
        #expect(phase.bound(attempt: 5) == 9_000_000_000_000_000)
    }

    /// Frames at times near `Int64.max` trapped the stale-ping and stale-close deadline
    /// additions (`t + timeout + tolerance`). Such records come from code (the live proxy,
    /// a fuzzer) or files older than the decoder's time bound; the additions saturate.
    @Test func timesNearInt64MaxDoNotOverflowDeadlines() throws {
        let base = Int64.max - 5_000_000
        var wire = Wire()
        let a = wire.connect(at: 0, activityTimeout: 60)
        wire.records = wire.records.map { shifted($0, by: base) }
        wire.records.append(.frame(FrameRecord(conn: a, t: base + 1_000_000, from: .client, opcode: .text, masked: true,
                                               payload: Array(#"{"event":"bird:ping","data":{}}"#.utf8))))
        wire.records.append(.frame(FrameRecord(conn: a, t: base + 2_000_000, from: .server, opcode: .text, masked: false,
                                               payload: Array(#"{"event":"bird:pong","data":{}}"#.utf8))))
        let spec = try SpecLoader.load("bird")
        var analyzer = LiveAnalyzer(options: AnalyzerOptions(spec: spec, clientKey: .standard))
        var events: [AnalysisEvent] = []
        for record in wire.records { events += analyzer.feed(record) }
        events += analyzer.finish(at: Int64.max)
        #expect(Outcome(events: events).transitions.contains { $0.to == "connected" })
    }

    private func shifted(_ record: CaptureRecord, by offset: Int64) -> CaptureRecord {
        switch record {
        case .open(var r): r.t += offset; return .open(r)
        case .upgrade(var r): r.t += offset; return .upgrade(r)
        case .frame(var r): r.t += offset; return .frame(r)
        case .end(var r): r.t += offset; return .end(r)
        default: return record
        }
    }
}
