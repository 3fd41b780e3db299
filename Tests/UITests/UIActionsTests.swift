import Testing
import JSON
import Lifecycle
@testable import UI

/// The page's actions are control API requests, answered by the same router and backend
/// as `ctl`: rules checked by the same parser, errors with the column to underline.
@Suite struct UIActionsTests {
    func model(rows: [Int]) throws -> UIModel {
        let model = try Session.model()
        for c in rows { for r in Session.open(c, at: Double(c)) { model.observe(r) } }
        return model
    }

    @Test func closeWithCodeAndReasonIsAppliedToTheConnection() throws {
        let backend = FakeBackend(open: [1, 2])
        let result = UIActions(backend: backend).perform(
            ["type": "action", "id": 7, "action": "close", "conn": 2, "code": 4009, "reason": "bye"], model: try model(rows: [1, 2]))
        #expect(result["ok"]?.boolValue == true)
        #expect(result["id"]?.intValue == 7)
        #expect(result["body"]?["rule"]?.stringValue == "close:4009,reason=bye")
        #expect(result["body"]?["connection"]?.intValue == 2)
        #expect(backend.changed == [2])
    }

    @Test func aBadRuleComesBackWithTheParsersColumn() throws {
        let backend = FakeBackend(open: [1])
        let result = UIActions(backend: backend).perform(
            ["type": "action", "id": 1, "action": "apply", "conn": 1, "rule": "close:99999"], model: try model(rows: [1]))
        #expect(result["ok"]?.boolValue == false)
        #expect(result["status"]?.intValue == 400)
        #expect(result["body"]?["column"]?.intValue == 7)
        #expect(result["body"]?["detail"]?.stringValue?.contains("outside 1000-4999") == true)
        #expect(backend.changed.isEmpty)
    }

    @Test func scopesReachAConnectionAClientOrEverything() throws {
        let backend = FakeBackend(open: [1, 2, 3])
        let model = try model(rows: [1, 2, 3])
        var analyzer = LiveAnalyzer(options: .init(spec: model.spec))
        // Group the three connections (same address, agent and path: one client).
        for c in 1...3 { for r in Session.open(c, at: Double(c)) { for e in analyzer.feed(r) { model.observe(e) } } }
        let actions = UIActions(backend: backend)
        let client = actions.perform(["type": "action", "action": "apply", "scope": "client", "conn": 1, "rule": "stall-pongs"], model: model)
        #expect(client["ok"]?.boolValue == true, "\(client)")
        let applied = client["body"]?["applied_to"]?.arrayValue?.compactMap(\.intValue) ?? []
        #expect(!applied.isEmpty && Set(applied).isSubset(of: [1, 2, 3]))
        let all = actions.perform(["type": "action", "action": "apply", "scope": "all", "rule": "latency:50ms"], model: model)
        #expect(all["status"]?.intValue == 201)
        #expect(backend.faultEngine.list().map(\.rule.text) == ["latency:50ms"])
        let send = actions.perform(["type": "action", "action": "send", "to": "server", "conn": 3, "text": #"{"event":"x"}"#], model: model)
        #expect(send["body"]?["rule"]?.stringValue == #"inject:{"event":"x"},to=server"#)
    }

    @Test func offlineThereAreNoActions() throws {
        let result = UIActions(backend: nil).perform(["type": "action", "action": "close", "conn": 1, "code": 4009], model: try model(rows: [1]))
        #expect(result["ok"]?.boolValue == false)
        #expect(result["status"]?.intValue == 409)
    }
}
