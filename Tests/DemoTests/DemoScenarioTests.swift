import Demo
import Faults
import Testing

/// The demo's scenario as data, without running it (the whole run is EndToEndTests'
/// `DemoTests`, through the binary).
@Suite struct DemoScenarioTests {
    @Test func everyFaultRuleParsesAndTargetsOneClient() throws {
        let scenario = DemoScenario(clients: DemoScenario.minimumClients)
        #expect(try scenario.parsedRules().count == scenario.faultRules.count)
        for rule in scenario.faultRules {
            #expect(rule.contains("client=(client "), "\(rule) names no client")
        }
    }

    @Test func theSpecLoadsAndChecksTheBugRule() throws {
        let spec = try DemoScenario(clients: 5).spec()
        #expect(spec.rules.contains(DemoScenario.bugRule))
    }
}
