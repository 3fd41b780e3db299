import ControlAPI
import Faults
import JSON
import Testing

/// A fleet through the control API: metrics labelled with the replica, and `ctl --proxy`
/// answers from several replicas shown side by side (pure rendering; the end-to-end test
/// with real replicas is EndToEndTests' FleetTests).
@Suite struct FleetControlTests {
    @Test func aNamedReplicaLabelsEverySampleAndAnUnnamedOneNone() throws {
        let backend = FakeBackend()
        backend.counters.connectionsTotal = 3
        backend.counters.framesClientToServer = 5
        backend.counters.replica = "east \"1\""
        let labelled = ControlRouter(token: nil).respond(to: request("GET", "/metrics"), backend: backend).text
        let samples = labelled.split(separator: "\n").filter { !$0.hasPrefix("#") }
        #expect(!samples.isEmpty)
        for sample in samples { #expect(sample.contains("{replica=\"east \\\"1\\\"\""), "unlabelled: \(sample)") }
        #expect(samples.contains("faultline_connections_total{replica=\"east \\\"1\\\"\"} 3"))
        #expect(samples.contains("faultline_frames_total{replica=\"east \\\"1\\\"\",direction=\"c2s\"} 5"))
        backend.counters.replica = nil
        let plain = ControlRouter(token: nil).respond(to: request("GET", "/metrics"), backend: backend).text
        #expect(plain.contains("faultline_connections_total 3\n") && !plain.contains("replica="))
    }

    static func answer(_ proxy: String, _ json: JSONValue, status: Int = 200) -> CtlFleetOutput.Answer {
        CtlFleetOutput.Answer(proxy: proxy, response: .json(status, json))
    }

    static let connections: [CtlFleetOutput.Answer] = [
        answer("127.0.0.1:7001", ["connections": [["id": 1, "state": "open", "client": "127.0.0.1:1", "client_key": "sim (client 1) /app/k"]]]),
        CtlFleetOutput.Answer(proxy: "127.0.0.1:7002", failure: "connection refused"),
        answer("127.0.0.1:7003", ["connections": [["id": 1, "state": "open", "client": "127.0.0.1:2", "client_key": "sim (client 2) /app/k"],
                                                  ["id": 4, "state": "open", "client": "127.0.0.1:3", "client_key": "sim (client 1) /app/k"]]]),
    ]

    @Test func connectionsOfEveryReplicaAreOneTableWithAProxyColumn() {
        let text = CtlFleetOutput.render("connections", Self.connections, json: false)
        let lines = text.split(separator: "\n")
        #expect(lines.count == 4)
        #expect(lines[0].hasPrefix("PROXY"))
        #expect(lines[1].hasPrefix("127.0.0.1:7001  1 "))
        #expect(lines[3].hasPrefix("127.0.0.1:7003  4 ") && lines[3].hasSuffix("sim (client 1) /app/k"))
        #expect(!text.contains("7002"), "an unanswered replica has no rows (it is named on stderr)")
    }

    @Test func jsonMergesTheRowsAndListsTheUnanswered() throws {
        let value = try JSONParser.parse(CtlFleetOutput.render("connections", Self.connections, json: true))
        let rows = value["connections"]?.arrayValue ?? []
        #expect(rows.map { $0["proxy"]?.stringValue } == ["127.0.0.1:7001", "127.0.0.1:7003", "127.0.0.1:7003"])
        #expect(rows.map { $0["id"]?.intValue } == [1, 1, 4])
        #expect(value["unanswered"]?.arrayValue?.first?["proxy"]?.stringValue == "127.0.0.1:7002")
        #expect(value["unanswered"]?.arrayValue?.first?["error"]?.stringValue == "connection refused")
    }

    @Test func theHoldersOfAClientAreFoundByItsKeyOnTheirReplicas() {
        let holders = CtlFleetOutput.holders(of: "(client 1)", in: Self.connections)
        #expect(holders.map(\.answer) == [0, 2])
        #expect(holders.map(\.connection) == [1, 4])
        #expect(CtlFleetOutput.holders(of: "(client 9)", in: Self.connections).isEmpty)
    }

    @Test func oneLineAnswersArePrefixedByTheirProxy() {
        let answers = [Self.answer("a:1", ["id": 3, "rule": "close:4009"]), Self.answer("bb:22", ["id": 1, "rule": "close:4009"]),
                       Self.answer("c:3", ["error": "bad rule", "status": 400], status: 400)]
        let text = CtlFleetOutput.render("add", answers, json: false)
        #expect(text == "a:1    added rule 3: close:4009\nbb:22  added rule 1: close:4009\n")
    }

    @Test func watchEventsNameTheirProxy() throws {
        let tagged = try JSONParser.parse(CtlFleetOutput.watchLine("{\"event\":\"fault\",\"conn\":2}", proxy: "a:1"))
        #expect(tagged["proxy"]?.stringValue == "a:1" && tagged["event"]?.stringValue == "fault" && tagged["conn"]?.intValue == 2)
        let odd = try JSONParser.parse(CtlFleetOutput.watchLine("not json", proxy: "a:1"))
        #expect(odd["line"]?.stringValue == "not json")
    }
}
