import Capture
import Testing
@testable import Faults

/// Triggers and scopes through `ConnectionFaults`, the per-connection driver the relay uses.
@Suite struct TriggerTests {
    func kinds(_ outcomes: [FaultOutcome]) -> [String] { outcomes.map(\.kind) }

    @Test func withoutTriggerAFaultArmsWhenTheWebSocketOpens() {
        let (_, outcomes) = Make.connection(["drop"], openedAt: 500)
        #expect(outcomes.map(\.effects) == [[.drop]])
        #expect(outcomes.first?.rule == "drop")
    }

    @Test func afterCountsFromConnectionOpen() {
        var (faults, outcomes) = Make.connection(["close:4009,after=30s"], openedAt: 2_000_000)
        #expect(outcomes.isEmpty)
        #expect(faults.nextWakeup == 32_000_000)
        #expect(faults.tick(now: 31_999_999).isEmpty)
        let fired = faults.tick(now: 32_000_000)
        #expect(fired.map(\.effects) == [[.close(to: .client, code: 4009, reason: "")]])
        #expect(faults.tick(now: 40_000_000).isEmpty)   // once
    }

    @Test func atCountsFromProxyStartAndLaterConnectionsArmAtOnce() {
        var (early, none) = Make.connection(["drop,at=10s"], openedAt: 3_000_000, proxyStart: 1_000_000)
        #expect(none.isEmpty)
        #expect(early.nextWakeup == 11_000_000)
        #expect(kinds(early.tick(now: 11_000_000)) == ["drop"])
        let (_, late) = Make.connection(["drop,at=10s"], openedAt: 20_000_000, proxyStart: 1_000_000)
        #expect(kinds(late) == ["drop"])
    }

    @Test func onArmsAfterTheFrameCarryingTheEvent() {
        var (faults, outcomes) = Make.connection(["close:4009,on=bird_internal:subscription_succeeded"])
        #expect(outcomes.isEmpty)
        #expect(faults.nextWakeup == nil)
        let succeeded = Make.event("bird_internal:subscription_succeeded", from: .server)
        #expect(faults.judge(succeeded, now: 5) == .untouched)   // the frame itself passes
        #expect(faults.frameSeen(event: Make.event("bird:pong", from: .server).event, now: 5).isEmpty)
        #expect(kinds(faults.frameSeen(event: succeeded.event, now: 6)) == ["close"])
    }

    @Test func onKindArmsAfterAnEventOfThatKindWhateverItsName() throws {
        var (faults, outcomes) = Make.connection(["close:4009,on-kind=subscription_succeeded"])
        #expect(outcomes.isEmpty)
        #expect(faults.frameSeen(event: Make.event("bird:pong", from: .server).event, now: 5).isEmpty)
        // Another prefix's spelling of the same event: the kind matches, the name would not.
        let succeeded = Make.event("acme_internal:subscription_succeeded", from: .server, dialect: "acme")
        #expect(succeeded.event?.kind == .subscriptionSucceeded)
        #expect(kinds(faults.frameSeen(event: succeeded.event, now: 6)) == ["close"])
        #expect(throws: FaultRuleError.self) { try FaultRule.parse("close:4009,on-kind=subscribed") }
    }

    @Test func framesArmsAfterNFramesAndCombinesWithAfter() {
        var (faults, _) = Make.connection(["inject:{\"event\":\"x\"},frames=3,after=1s"])
        #expect(faults.frameSeen(event: nil, now: 10).isEmpty)
        #expect(faults.frameSeen(event: nil, now: 20).isEmpty)
        #expect(faults.frameSeen(event: nil, now: 30).isEmpty)   // 3 frames but not 1 s yet
        #expect(faults.nextWakeup == 1_000_000)
        #expect(kinds(faults.tick(now: 1_000_000)) == ["inject"])
    }

    @Test func connAndEveryPickConnectionsByOrdinal() {
        func armedOrdinals(_ rule: String) -> [Int] {
            let engine = FaultEngine(rules: [Make.rule(rule)])
            return (1...10).filter { _ in !Make.connection([], engine: engine).1.isEmpty }
        }
        #expect(armedOrdinals("drop,conn=2") == [2])
        #expect(armedOrdinals("drop,conn=3-5") == [3, 4, 5])
        #expect(armedOrdinals("drop,every=3") == [3, 6, 9])
        #expect(armedOrdinals("drop,conn=2-9,every=3") == [2, 5, 8])
    }

    /// Issue 17 item 4: a connection that never sends an upgrade request (a health check)
    /// takes no number, so `conn=1` is still the first real client.
    @Test func probesWithoutARequestTakeNoConnectionNumber() {
        let engine = FaultEngine(rules: [Make.rule("drop,conn=1"), Make.rule("close:4009,every=2")])
        let probe = ConnectionFaults(engine: engine, conn: 1, openedAt: 0)
        #expect(probe.ordinal == nil)
        var first = ConnectionFaults(engine: engine, conn: 2, openedAt: 0)
        _ = first.upgradeRequested(clientKey: "k", now: 0)
        #expect(first.ordinal == 1)
        #expect(kinds(first.websocketOpened(now: 0)) == ["drop"])
        var second = ConnectionFaults(engine: engine, conn: 3, openedAt: 0)
        _ = second.upgradeRequested(clientKey: "k", now: 0)
        #expect(second.ordinal == 2)
        #expect(kinds(second.websocketOpened(now: 0)) == ["close"])
    }

    @Test func clientMatchesAPartOfTheClientKey() {
        let engine = FaultEngine(rules: [Make.rule("drop,client=pysher")])
        var matching = ConnectionFaults(engine: engine, conn: 1, openedAt: 0)
        _ = matching.upgradeRequested(clientKey: "pysher/1.0 /app/key", now: 0)
        #expect(kinds(matching.websocketOpened(now: 0)) == ["drop"])
        var other = ConnectionFaults(engine: engine, conn: 2, openedAt: 0)
        _ = other.upgradeRequested(clientKey: "pusher-js /app/key", now: 0)
        #expect(other.websocketOpened(now: 0).isEmpty)
    }

    @Test func probabilityRepeatsExactlyForASeed() {
        func picked(seed: UInt64) -> [Int] {
            let engine = FaultEngine(rules: [Make.rule("drop,prob=0.5")], seed: seed)
            return (1...64).filter { _ in !Make.connection([], engine: engine).1.isEmpty }
        }
        let first = picked(seed: 42)
        #expect(first == picked(seed: 42))
        #expect(first != picked(seed: 43))
        #expect((16...48).contains(first.count))   // about half of 64
        #expect(picked(seed: 42).isEmpty == false)
        let never = FaultEngine(rules: [Make.rule("drop,prob=0")])
        #expect((1...20).allSatisfy { _ in Make.connection([], engine: never).1.isEmpty })
    }

    @Test func refusalsRespectScopeAndTime() {
        let engine = FaultEngine(rules: [Make.rule("refuse-http:503,conn=2"), Make.rule("refuse:4004,at=5s")])
        var first = ConnectionFaults(engine: engine, conn: 1, openedAt: 0)
        #expect(first.upgradeRequested(clientKey: "k", now: 0).isEmpty)
        var second = ConnectionFaults(engine: engine, conn: 2, openedAt: 0)
        #expect(second.upgradeRequested(clientKey: "k", now: 0).map(\.effects) == [[.refuseHTTP(status: 503)]])
        var third = ConnectionFaults(engine: engine, conn: 3, openedAt: 6_000_000)
        #expect(third.upgradeRequested(clientKey: "k", now: 6_000_000).map(\.effects)
                == [[.refuseUpgrade(code: 4004, reason: "")]])
    }

    @Test func stateFaultsCombineOnOneFrame() {
        var (faults, outcomes) = Make.connection(["latency:10ms", "latency:5ms", "activity-timeout:7"])
        #expect(kinds(outcomes) == ["latency", "latency"])   // activity-timeout reports when it acts
        let decision = faults.judge(Make.handshake(), wire: Make.bird, now: 0)
        #expect(decision.delay == 15_000)
        #expect(decision.rewritten != nil)
        #expect(decision.rule == "latency:10ms")
        #expect(decision.outcomes.map(\.kind) == ["activity-timeout"])
    }

    @Test func forEndsAfterItsDurationThroughTick() {
        var (faults, _) = Make.connection(["blackhole,after=1s,for=2s"])
        #expect(faults.tick(now: 1_000_000).first?.report == "blackholing both ways for 2s")
        #expect(faults.judge(Make.event("a", from: .client), now: 1_500_000).dropped)
        #expect(faults.nextWakeup == 3_000_000)
        #expect(faults.tick(now: 3_000_000).first?.report?.hasPrefix("blackhole over") == true)
        #expect(!faults.judge(Make.event("a", from: .client), now: 3_000_001).dropped)
    }
}

/// `host=` and `path=`: scope by the upgrade request's Host and path (forward mode, routes).
@Suite struct HostPathTriggerTests {
    private func armed(_ rule: String, host: String?, target: String) -> Bool {
        let engine = FaultEngine(rules: [Make.rule(rule)])
        var faults = ConnectionFaults(engine: engine, conn: 1, openedAt: 0)
        _ = faults.upgradeRequested(clientKey: "agent \(target)", host: host, path: target, now: 0)
        return !faults.websocketOpened(now: 0).isEmpty
    }

    @Test func hostMatchesTheNameWithOrWithoutPort() {
        #expect(armed("drop,host=api.example.com", host: "API.example.com:443", target: "/app/key"))
        #expect(armed("drop,host=api.example.com", host: "api.example.com", target: "/"))
        #expect(!armed("drop,host=api.example.com", host: "other.example.com", target: "/"))
        #expect(armed("drop,host=api.example.com:8443", host: "api.example.com:8443", target: "/"))
        #expect(!armed("drop,host=api.example.com:8443", host: "api.example.com:443", target: "/"))
        #expect(armed("drop,host=*.example.com", host: "ws.eu.example.com:443", target: "/"))
        #expect(!armed("drop,host=*.example.com", host: "example.com", target: "/"))
        #expect(armed("drop,host=[::1]", host: "[::1]:8080", target: "/"))
        #expect(!armed("drop,host=api.example.com", host: nil, target: "/"))
    }

    @Test func pathIsAPrefixOfThePathWithoutTheQuery() {
        #expect(armed("drop,path=/app/", host: "h", target: "/app/key?protocol=7"))
        #expect(!armed("drop,path=/app/key2", host: "h", target: "/app/key?x=/app/key2"))
        #expect(armed("drop,host=h,path=/app,client=agent", host: "h:1", target: "/app/k"))
        #expect(!armed("drop,host=h,path=/other", host: "h:1", target: "/app/k"))
    }

    @Test func badValuesAreRefused() {
        #expect(throws: FaultRuleError.self) { try FaultRule.parse("drop,path=app") }
        #expect(throws: FaultRuleError.self) { try FaultRule.parse("drop,host=") }
        #expect(throws: FaultRuleError.self) { try FaultRule.parse("drop,host=a/b") }
    }
}
