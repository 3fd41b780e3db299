import Capture
import Testing
@testable import Faults
import Vocabulary

/// `for=DUR` on every kind, and rules applied to one connection honouring their triggers.
@Suite struct ForDurationTests {
    @Test func aLatencySpikeEndsAfterItsDuration() {
        var (faults, outcomes) = Make.connection(["latency:300ms,for=10s"])
        #expect(outcomes.first?.report == "delaying frames by 300ms")
        #expect(faults.judge(Make.event("a", from: .server), now: 1_000_000).delay == 300_000)
        #expect(faults.nextWakeup == 10_000_000)
        #expect(faults.tick(now: 9_999_999).isEmpty)
        let over = faults.tick(now: 10_000_000)
        #expect(over.map(\.report) == ["latency over after 10s: normal service again"])
        #expect(faults.judge(Make.event("a", from: .server), now: 10_000_001).delay == 0)
        #expect(faults.nextWakeup == nil)
    }

    @Test func forCountsFromTheStartNotFromTheConnection() {
        var (faults, _) = Make.connection(["drop-message,after=5s,for=2s"])
        #expect(!faults.judge(Make.event("a", from: .server), now: 1_000_000).dropped)
        _ = faults.tick(now: 5_000_000)
        #expect(faults.judge(Make.event("a", from: .server), now: 6_000_000).dropped)
        #expect(faults.nextWakeup == 7_000_000)
        _ = faults.tick(now: 7_000_000)
        #expect(!faults.judge(Make.event("a", from: .server), now: 7_000_001).dropped)
    }

    @Test func everyKindAcceptsFor() {
        for kind in FaultRegistry.kinds {
            let rule = kind.kind + (kind.example.map { ":" + $0 } ?? "") + ",for=1s"
            #expect((try? FaultRule.parse(rule)) != nil, "\(rule)")
        }
    }

    @Test func anAppliedRuleWaitsForItsAfter() {
        let engine = FaultEngine()
        var (faults, _) = Make.connection([], engine: engine)
        _ = faults.tick(now: 1_000_000)
        engine.applyNow(Make.rule("close:4009,after=3s"), to: faults.conn)
        #expect(faults.refresh(now: 2_000_000).isEmpty)
        #expect(faults.nextWakeup == 5_000_000)
        #expect(faults.tick(now: 4_999_999).isEmpty)
        #expect(faults.tick(now: 5_000_000).first?.effects == [.close(to: .client, code: 4009, reason: "")])
    }

    @Test func anAppliedRuleCountsFramesFromWhenItCame() {
        let engine = FaultEngine()
        var (faults, _) = Make.connection([], engine: engine)
        for t in 1...5 { _ = faults.frameSeen(event: nil, now: Micros(t)) }
        engine.applyNow(Make.rule("drop,frames=2"), to: faults.conn)
        #expect(faults.refresh(now: 10).isEmpty)
        #expect(faults.frameSeen(event: nil, now: 11).isEmpty)
        #expect(faults.frameSeen(event: nil, now: 12).first?.effects == [.drop])
    }

    @Test func firingsAreCountedPerRule() {
        let engine = FaultEngine(rules: [Make.rule("latency:1ms"), Make.rule("drop,conn=2")])
        _ = Make.connection([], engine: engine)
        _ = Make.connection([], engine: engine)
        #expect(engine.firedCount(rule: 1) == 2)
        #expect(engine.firedCount(rule: 2) == 1)
    }
}
