import Testing
import Capture
@testable import Lifecycle

@Suite struct BackoffRuleTests {
    @Test func boundReportsDelayAgainstBoundOfAttempt() throws {
        var wire = Wire()
        let a = wire.connect(at: 0)
        wire.end(a, at: 10)
        wire.connect(at: 14.2)
        let out = try analyze(wire, end: 20)
        let f = try #require(out.findings("backoff.bound").first)
        #expect(f.message.hasPrefix("delay 4.20 s > bound 1.00 s for attempt 1"))
        #expect(f.severity == .error)
        #expect(f.conn == 2)
        #expect(f.evidence.count == 2)
        #expect(out.findings.count == 1)
    }

    @Test func delayWithinBoundPlusToleranceIsClean() throws {
        var wire = Wire()
        let a = wire.connect(at: 0)
        wire.end(a, at: 10)
        wire.connect(at: 11.2)
        #expect(try analyze(wire, end: 20).findings.isEmpty)
    }

    @Test func boundGrowsWithAttemptsAndCaps() throws {
        var wire = Wire()
        let a = wire.connect(at: 0)
        wire.end(a, at: 10)
        // Attempts 1..3 fail before the handshake: bounds 1, 2, 4 s.
        let b = wire.connect(at: 10.9, handshake: false)
        wire.end(b, at: 11)
        let c = wire.connect(at: 12.9, handshake: false)
        wire.end(c, at: 13)
        wire.connect(at: 17.5)  // attempt 3: 4.5 s > 4 s + 0.25 s
        let out = try analyze(wire, end: 20)
        #expect(out.rules() == ["backoff.bound"])
        #expect(out.findings.first?.message.hasPrefix("delay 4.50 s > bound 4.00 s for attempt 3") == true)
    }

    @Test func resetReportedInsteadOfBoundWhenDelayFitsUnresetCounter() throws {
        var wire = Wire()
        let a = wire.connect(at: 0)
        wire.end(a, at: 10)
        let b = wire.connect(at: 10.5, handshake: false)
        wire.end(b, at: 10.6)
        let c = wire.connect(at: 12.1)  // attempt 2, connected: counter resets
        wire.end(c, at: 20)
        wire.connect(at: 23.5)  // attempt 1 again (bound 1 s), but fits attempt 3's 4 s
        let out = try analyze(wire, end: 30)
        #expect(out.rules() == ["backoff.reset"])
        #expect(out.findings.first?.message.contains("fits bound 4.00 s of attempt 3 without reset") == true)
    }

    @Test func jitterAllEqualDelaysWarns() throws {
        var wire = Wire()
        var t = 0.0
        var conn = wire.connect(at: t)
        for _ in 0..<8 {
            t += 5
            wire.end(conn, at: t)
            t += 0.5
            conn = wire.connect(at: t)
        }
        let out = try analyze(wire, end: t + 1)
        let f = try #require(out.findings("backoff.jitter").first)
        #expect(f.severity == .warning)
        #expect(f.message.contains("all 8 delays are 0.50 of their bound"))
    }

    @Test func jitterSpreadDelaysAreClean() throws {
        var wire = Wire()
        var t = 0.0
        var conn = wire.connect(at: t)
        for u in [0.05, 0.92, 0.35, 0.5, 0.65, 0.2, 0.8, 0.12, 0.71] {
            t += 5
            wire.end(conn, at: t)
            t += u
            conn = wire.connect(at: t)
        }
        #expect(try analyze(wire, end: t + 1).findings.isEmpty)
    }

    @Test func jitterNeedsEightDelays() throws {
        var wire = Wire()
        var t = 0.0
        var conn = wire.connect(at: t)
        for _ in 0..<7 {
            t += 5
            wire.end(conn, at: t)
            t += 0.5
            conn = wire.connect(at: t)
        }
        #expect(try analyze(wire, end: t + 1).findings.isEmpty)
    }

    @Test func ksTestRejectsSkewedAndAcceptsUniform() {
        let skewed = (0..<20).map { 0.9 + Double($0) * 0.004 }
        let d = BackoffJitter.ksStatistic(skewed)
        #expect(BackoffJitter.ksPValue(d: d, n: skewed.count) < 0.01)
        let uniform = (0..<20).map { (Double($0) + 0.5) / 20 }
        let d2 = BackoffJitter.ksStatistic(uniform)
        #expect(d2 <= 0.05 + 1e-9)
        #expect(BackoffJitter.ksPValue(d: d2, n: uniform.count) > 0.5)
    }
}
