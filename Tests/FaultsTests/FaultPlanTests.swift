import Testing
@testable import Faults

@Suite struct FaultPlanTests {
    @Test func readsRulesSkippingCommentsAndBlankLines() throws {
        let text = """
            # QA scenario: member terminated after subscribing
            stall-pongs,conn=2,after=5s   # second connection only

            close:4009,after=30s,reason=terminated
            \tinject:{"event":"bird:error","data":{"message":"# not a comment"}},to=client\r
            """
        let plan = try FaultPlan.parse(text, name: "scenario.faults")
        #expect(plan.rules.map(\.kind) == ["stall-pongs", "close", "inject"])
        #expect(plan.entries.map(\.line) == [2, 4, 5])
        #expect(plan.rules[0].text == "stall-pongs,conn=2,after=5s")
        let inject = try #require(try plan.rules[2].makeFault() as? Inject)
        #expect(String(decoding: inject.payload, as: UTF8.self).contains("# not a comment"))
    }

    @Test func errorNamesFileLineAndColumn() {
        let text = "drop,conn=1\n\n  close:99999,after=5s # oops\n"
        do {
            _ = try FaultPlan.parse(text, name: "plan.txt")
            Issue.record("parsed")
        } catch {
            #expect(error.location == "plan.txt:3")
            #expect(error.summary == "plan.txt:3:9: close code 99999 outside 1000-4999")
            #expect(error.description.hasSuffix("  close:99999,after=5s # oops\n          ^^^^^"))
        }
    }

    @Test func unknownKindInAPlanListsKnownKinds() {
        do {
            _ = try FaultPlan.parse("# header\nstal-pongs,after=1s", name: "p")
            Issue.record("parsed")
        } catch {
            #expect(error.summary.hasPrefix("p:2:1: unknown fault kind 'stal-pongs' (did you mean 'stall-pongs'?) (known kinds: stall-pongs, stall-pings, close,"))
        }
    }

    @Test func emptyPlanHasNoRules() throws {
        #expect(try FaultPlan.parse("\n# nothing\n   \n", name: "x").rules.isEmpty)
    }
}
