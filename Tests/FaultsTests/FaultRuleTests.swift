import Capture
import Testing
@testable import Faults

@Suite struct FaultRuleTests {
    @Test func parsesKindArgumentOptionsAndTriggers() throws {
        let rule = try FaultRule.parse("close:4009,after=30s,reason=terminated")
        #expect(rule.kind == "close")
        #expect(rule.argument == "4009")
        #expect(rule.option("reason")?.value == "terminated")
        #expect(rule.trigger.after == 30_000_000)
        let fault = try #require(try rule.makeFault() as? CloseFault)
        #expect(fault.code == 4009 && fault.reason == "terminated" && fault.target == .client)
    }

    @Test func parsesScopeTriggers() throws {
        let rule = try FaultRule.parse("stall-pongs, conn=2-5, every=2, after=5s, at=1m, on=bird:subscribe, frames=3, client=pysher, prob=0.25")
        #expect(rule.trigger.connections == 2...5)
        #expect(rule.trigger.every == 2)
        #expect(rule.trigger.after == 5_000_000)
        #expect(rule.trigger.at == 60_000_000)
        #expect(rule.trigger.onEvent == "bird:subscribe")
        #expect(rule.trigger.frames == 3)
        #expect(rule.trigger.client == "pysher")
        #expect(rule.trigger.probability == 0.25)
        #expect(try FaultRule.parse("drop,conn=4").trigger.connections == 4...4)
    }

    @Test(arguments: [("500ms", 500_000), ("5s", 5_000_000), ("1.5s", 1_500_000), ("2m", 120_000_000),
                      ("250us", 250), ("1h", 3_600_000_000), ("0s", 0), ("5", 5_000_000), ("0.5", 500_000)] as [(String, Int64)])
    func durations(text: String, micros: Int64) throws {
        #expect(try FaultDuration.parse(text).get() == micros)
    }

    @Test(arguments: ["s", "1.2.3s", "-1s", "5 s", "5days", "", "1.2.3", "-5"])
    func badDurations(text: String) {
        #expect(throws: FaultDurationError.self) { try FaultDuration.parse(text).get() }
    }

    @Test func injectJSONMayHoldCommasAndQuotedValuesMayToo() throws {
        let rule = try FaultRule.parse(#"inject:{"event":"bird:error","data":{"message":"a, b","code":4009}},to=client"#)
        let fault = try #require(try rule.makeFault() as? Inject)
        #expect(String(decoding: fault.payload, as: UTF8.self) == #"{"event":"bird:error","data":{"message":"a, b","code":4009}}"#)
        #expect(fault.target == .client)
        let quoted = try FaultRule.parse(#"close:4200,reason="bye, now""#)
        #expect(quoted.option("reason")?.value == "bye, now")
    }

    /// One duration syntax everywhere: a bare number is seconds, as `--duration 5` is.
    @Test func aBareNumberIsSecondsAsOnTheCommandLine() throws {
        #expect(try FaultRule.parse("close:4009,after=5").trigger.after == 5_000_000)
        #expect(try FaultRule.parse("close:4009,after=0.25").trigger.after == 250_000)
        #expect(try FaultRule.parse("close:4009,after=5").trigger == FaultRule.parse("close:4009,after=5s").trigger)
        #expect(FaultDuration.parse("5") == .success(5_000_000))
        #expect(FaultDuration.parse("5x") != .success(5_000_000))
    }

    /// Each bad rule must name the problem and point at the bad part.
    @Test(arguments: [
        ("close:99999", "close code 99999 outside 1000-4999", 6, 5),
        ("close:1006", "close code 1006 may not be sent", 6, 4),
        ("close:1005", "close code 1005 may not be sent", 6, 4),
        ("close:1015", "close code 1015 may not be sent", 6, 4),
        ("close:2000", "close code 2000 may not be sent", 6, 4),
        ("close:999", "close code 999 outside 1000-4999", 6, 3),
        ("close", "close needs a close code", 5, 1),
        ("close:4009,to=upstream", "to must be client or server", 14, 8),
        ("stall-pongs,for=abc", "duration 'abc' needs a unit", 16, 3),
        ("latency:fast", "duration 'fast' needs a unit", 8, 4),
        ("blackhole,dir=up", "dir must be c2s, s2c or both", 14, 2),
        ("drop,conn=0", "conn must be a whole number", 10, 1),
        ("drop,conn=5-2", "conn range 5-2 is empty", 10, 3),
        ("drop,prob=1.5", "prob must be a number from 0 to 1", 10, 3),
        ("drop,speed=3", "unknown option 'speed' for drop", 5, 5),
        ("drop,after=1s,after=2s", "'after' given twice", 14, 5),
        ("drop,banana", "expected KEY=VALUE", 5, 6),
        ("refuse-http:200", "HTTP status 200 outside 400-599", 12, 3),
        ("refuse:4001,on=bird:pong", "refuse acts at the upgrade", 12, 2),
        ("activity-timeout:0", "activity timeout must be whole seconds", 17, 1),
        (#"inject:{"event":}"#, "inject needs valid JSON", 16, 1),
        ("drop:now", "drop takes no argument", 5, 3),
    ] as [(String, String, Int, Int)])
    func rejectsWithPosition(text: String, message: String, column: Int, length: Int) {
        do {
            _ = try FaultRule.parse(text)
            Issue.record("'\(text)' parsed")
        } catch {
            #expect(error.message.contains(message), "\(error.message)")
            #expect(error.column == column, "\(error)")
            #expect(error.length == length, "\(error)")
            #expect(error.rule == text)
        }
    }

    @Test func unknownKindListsTheKnownOnes() {
        do {
            _ = try FaultRule.parse("explode:now,after=1s")
            Issue.record("parsed")
        } catch {
            #expect(error.message.hasPrefix("unknown fault kind 'explode'"))
            for name in FaultRegistry.names { #expect(error.message.contains(name)) }
            #expect(error.column == 0 && error.length == 7)
            #expect(error.description.hasSuffix("  explode:now,after=1s\n  ^^^^^^^"))
        }
    }

    @Test func descriptionPointsAtTheBadPart() {
        let error = FaultRuleError("close code 99999 outside 1000-4999", rule: "close:99999,after=5s", column: 6, length: 5)
        #expect(error.description == """
            fault rule 'close:99999,after=5s' (column 7): close code 99999 outside 1000-4999
              close:99999,after=5s
                    ^^^^^
            """)
    }

    @Test func registryHasEveryKindOnceWithItsSummary() {
        #expect(FaultRegistry.names == ["stall-pongs", "stall-pings", "close", "drop", "reset", "blackhole", "latency", "refuse",
                                        "refuse-http", "strip-socket-id", "activity-timeout", "inject", "bandwidth", "slicer",
                                        "fragment", "slow-close", "limit-data", "timeout", "drop-message", "delay-message",
                                        "duplicate", "reorder", "rewrite"])
        #expect(Set(FaultRegistry.names).count == FaultRegistry.names.count)
        #expect(FaultRegistry.helpLines.allSatisfy { !$0.isEmpty })
    }
}
