import Lifecycle
import Vocabulary
@testable import Reports

import Testing

/// The report keeps its clients and findings in the builder's dense form and makes them
/// whole when read (`ReportClients`, `ReportFindings`): what is read must be what the
/// builder was given, a client changed in place (its spec, as `judgedPerClient` sets it)
/// must keep its lists, and the report-wide findings must stay in the order found.
@Suite struct ReportClientsTests {
    static func spec() throws -> LifecycleSpec { try SpecLoader.load("bird") }

    static func client(_ id: String) -> AnalysisReport.Client {
        var client = AnalysisReport.Client(info: ClientInfo(id: id, key: "key \(id)", firstSeen: 3))
        client.transitions = [
            Transition(client: id, conn: nil, t: 1, from: nil, to: "initialized", cause: "first observation", evidence: nil),
            Transition(client: id, conn: 4, t: 2, from: "initialized", to: "connecting", cause: "tcp open", evidence: nil),
        ]
        var bar = ConnectionLifespan(conn: 4, client: id, openedAt: 2)
        bar.endedAt = 9
        bar.closeCode = 4009
        bar.closedBy = .server
        bar.end = "close 4009 from server"
        client.connections = [bar]
        client.findings = [Finding(rule: "failed.retried", severity: .error, party: .client, client: id, conn: 4, t: 9,
                                   message: "m \(id)", evidence: [Evidence(conn: 4, t: 9, from: .server, summary: "close")])]
        client.connectionIDs = [4]
        client.findingCount = 1
        client.finalState = "connecting"
        return client
    }

    static func same(_ a: AnalysisReport.Client, _ b: AnalysisReport.Client) -> Bool {
        a.info.id == b.info.id && a.info.key == b.info.key && a.transitions == b.transitions && a.connections == b.connections
            && a.findings == b.findings && a.connectionIDs == b.connectionIDs && a.findingCount == b.findingCount
            && a.finalState == b.finalState && a.spec == b.spec && a.omitted == b.omitted
    }

    @Test func aClientReadIsTheClientStored() {
        let given = [Self.client("c1"), Self.client("c2")]
        let clients = ReportClients(given)
        #expect(clients.count == 2)
        #expect(zip(clients, given).allSatisfy { Self.same($0, $1) })
    }

    @Test func aClientChangedInPlaceKeepsItsLists() {
        var clients: ReportClients = [Self.client("c1"), Self.client("c2")]
        clients[1].spec = "socketio"
        clients[0].transitions.append(Transition(client: "c1", conn: 4, t: 5, from: "connecting", to: "open", cause: "101", evidence: nil))
        var expected = [Self.client("c1"), Self.client("c2")]
        expected[1].spec = "socketio"
        expected[0].transitions.append(Transition(client: "c1", conn: 4, t: 5, from: "connecting", to: "open", cause: "101", evidence: nil))
        #expect(zip(clients, expected).allSatisfy { Self.same($0, $1) })
    }

    /// The builder's report: clients in order of appearance with their lists, the
    /// report-wide findings in the order found across clients, a stray finding among them.
    @Test func theBuiltReportReadsAsTheEventsWent() throws {
        var builder = ReportBuilder()
        builder.add(.client(ClientInfo(id: "a", key: "a", firstSeen: 0)))
        builder.add(.client(ClientInfo(id: "b", key: "b", firstSeen: 0)))
        let finding = { (client: String, t: Micros) in
            Finding(rule: "r", severity: .warning, party: .client, client: client, conn: 1, t: t, message: "\(client) \(t)", evidence: [])
        }
        let order = [finding("b", 1), finding("a", 2), finding("nobody", 3), finding("b", 4), finding("a", 5)]
        for f in order { builder.add(.finding(f)) }
        let report = builder.build(spec: try Self.spec(), inputs: [], grouping: "g", prefix: nil)
        #expect(report.clients.map(\.info.id) == ["a", "b"])
        #expect(report.clients.map { $0.findings.map(\.t) } == [[2, 5], [1, 4]])
        #expect(Array(report.findings) == order)
        #expect(report.findings == ReportFindings(order))
    }
}
