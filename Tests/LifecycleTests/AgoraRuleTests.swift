import Testing
import Capture
@testable import Lifecycle

@Suite struct AgoraRuleTests {
    /// Connected at 0, interrupted at 10, then attempts refused with 503 after `delays`.
    func schedule(_ delays: [Double], lastSucceeds: Bool = false) -> (Wire, Double) {
        var wire = Wire()
        let a = wire.connect(at: 0, handshake: false)
        wire.end(a, at: 10)
        var dropped = 10.0
        for (i, delay) in delays.enumerated() {
            let t = dropped + delay
            let ok = lastSucceeds && i == delays.count - 1
            wire.connect(at: t, handshake: false, status: ok ? 101 : 503)
            dropped = t + 0.002
        }
        return (wire, dropped)
    }

    @Test func exactScheduleIsClean() throws {
        let (wire, end) = schedule([2, 4, 8, 16, 32, 64, 30, 30], lastSucceeds: true)
        let out = try analyze(wire, spec: "agora-rtm", end: end + 1)
        #expect(out.findings.isEmpty)
        #expect(out.transitions.map(\.to).contains("suspended"))
        #expect(out.transitions.first?.to == "idle")
    }

    @Test func offScheduleAttemptIsReported() throws {
        let (wire, end) = schedule([2, 6])
        let out = try analyze(wire, spec: "agora-rtm", end: end + 1)
        #expect(out.rules() == ["agora.backoff-schedule"])
        #expect(out.findings.first?.message == "delay 6.00 s != expected 4.00 s ± 0.50 s for attempt 2")
    }

    @Test func tooEarlyAttemptIsReportedToo() throws {
        let (wire, end) = schedule([0.5])
        #expect(try analyze(wire, spec: "agora-rtm", end: end + 1).rules() == ["agora.backoff-schedule"])
    }

    @Test func suspendedIntervalIsChecked() throws {
        let (wire, end) = schedule([2, 4, 8, 16, 32, 64, 30, 40])
        let out = try analyze(wire, spec: "agora-rtm", end: end + 1)
        #expect(out.rules() == ["agora.suspended-interval"])
        #expect(out.findings.first?.message == "interval 40.00 s != 30.00 s ± 0.50 s in state suspended")
    }

    @Test func fatalRefusalIsNotRetried() throws {
        var wire = Wire()
        wire.connect(at: 0, handshake: false, status: 401)
        wire.connect(at: 5, handshake: false)
        let out = try analyze(wire, spec: "agora-rtm", end: 6)
        #expect(out.rules() == ["agora.failed-retried"])
        #expect(out.findings.first?.message.contains("fatal upgrade refused 401") == true)
    }

    @Test func streamGivesUpAfterTwentyMinutes() throws {
        var delays: [Double] = [2, 4, 8, 16, 32, 64]
        delays += Array(repeating: 30, count: 40)
        let (wire, end) = schedule(delays)
        let stream = try analyze(wire, spec: "agora-rtm-stream", end: end + 1)
        #expect(Set(stream.rules()) == ["agora.stream-give-up"])
        #expect(stream.findings.first?.message.hasSuffix("> give-up 1200.00 s") == true)
        #expect(try analyze(wire, spec: "agora-rtm", end: end + 1).findings.isEmpty)
    }
}
