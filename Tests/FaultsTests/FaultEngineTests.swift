import Capture
import JSON
import Testing
@testable import Faults

@Suite struct FaultEngineTests {
    @Test func addListRemoveReset() {
        let engine = FaultEngine(rules: [Make.rule("drop,conn=9")])
        let id = engine.add(Make.rule("reset,conn=9"))
        #expect(engine.list().map(\.rule.text) == ["drop,conn=9", "reset,conn=9"])
        #expect(engine.list().map(\.id) == [1, id])
        #expect(engine.remove(id: 1))
        #expect(!engine.remove(id: 1))
        #expect(engine.list().map(\.id) == [id])
        engine.reset()
        #expect(engine.list().isEmpty)
        #expect(engine.add(Make.rule("drop")) == id + 1)   // ids are not reused
    }

    @Test func rulesAddedLaterReachOpenConnectionsAndRemovedOnesStop() {
        let engine = FaultEngine()
        var (faults, outcomes) = Make.connection([], engine: engine)
        #expect(outcomes.isEmpty)
        let id = engine.add(Make.rule("stall-pongs"))
        #expect(faults.refresh(now: 10).map(\.kind) == ["stall-pongs"])
        #expect(faults.judge(Make.event("bird:pong", from: .server), now: 11).dropped)
        engine.remove(id: id)
        #expect(faults.refresh(now: 12).isEmpty)
        #expect(!faults.judge(Make.event("bird:pong", from: .server), now: 13).dropped)
    }

    @Test func applyNowActsOnOneConnectionOnly() {
        let engine = FaultEngine()
        var (one, _) = Make.connection([], engine: engine)
        var (two, _) = Make.connection([], engine: engine)
        engine.applyNow(Make.rule("close:4200"), to: two.conn)
        #expect(one.refresh(now: 5).isEmpty)
        #expect(two.refresh(now: 5).map(\.effects) == [[.close(to: .client, code: 4200, reason: "")]])
        #expect(two.refresh(now: 6).isEmpty)
    }

    @Test func countsConnectionsAndFirings() {
        let engine = FaultEngine(rules: [Make.rule("drop,conn=2"), Make.rule("latency:1ms")])
        _ = Make.connection([], engine: engine)
        _ = Make.connection([], engine: engine)
        #expect(engine.connectionCount == 2)
        #expect(engine.firedCount == 3)
        #expect(engine.firedByKind == ["drop": 1, "latency": 2])
    }
}

@Suite struct FaultListingTests {
    @Test func entriesSerializeForTheControlAPI() {
        let engine = FaultEngine(rules: [Make.rule("close:4009,after=30s")])
        #expect(JSONWriter.serialize(engine.list()[0].json) == #"{"id":1,"rule":"close:4009,after=30s","kind":"close"}"#)
    }

    @Test func triggerHelpCoversEveryKey() {
        #expect(FaultTrigger.helpLines.count == FaultTrigger.keys.count)
        for (line, key) in zip(FaultTrigger.helpLines, FaultTrigger.keys) {
            #expect(line.hasPrefix("  \(key)="))
        }
    }
}
