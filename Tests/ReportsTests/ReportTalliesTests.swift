@testable import Lifecycle
import Testing
import Vocabulary
@testable import Reports

/// The summaries' tallies and the per-client auth requests, found by hashing: what they
/// give must be what the list searches they replace gave.
@Suite struct ReportTalliesTests {
    @Test func rowsAndTheirClientsKeepTheOrderTheyWereFirstSeenIn() {
        var tally = ClientTally<String>()
        let added = [("b", "client-2"), ("a", "client-1"), ("b", "client-1"), ("b", "client-2"), ("a", "client-1")]
            .map { tally.add($0.0, client: $0.1) }
        #expect(added == [true, true, false, false, false])
        #expect(tally.rows.map(\.key) == ["b", "a"])
        #expect(tally.rows.map(\.count) == [3, 2])
        #expect(tally.rows.map(\.clients) == [["client-2", "client-1"], ["client-1"]])
    }

    /// 50,000 clients with the same finding: one row, each client listed once.
    @Test func oneRowForManyClients() {
        var tally = ClientTally<String>()
        for i in 0..<100_000 { tally.add("handshake.missing-id", client: "client-\(i % 50_000)") }
        #expect(tally.rows.count == 1)
        #expect(tally.rows[0].count == 100_000)
        #expect(tally.rows[0].clients.count == 50_000)
        #expect(tally.rows[0].clients.prefix(2) == ["client-0", "client-1"])
    }

    @Test func aClientsAuthRequestsComeInTheReportsOrder() {
        func link(_ http: ConnectionID, _ conn: ConnectionID) -> AuthRequestLink {
            AuthRequestLink(httpConn: http, t: Micros(http), method: "POST", url: "/auth", status: 200,
                            conn: conn, subscribeT: Micros(http) + 1, channel: nil)
        }
        let links = [link(10, 3), link(11, 1), link(12, 2), link(13, 3), link(14, 1)]
        let index = AuthRequestIndex(links)
        #expect(index.links(of: [3, 1]).map(\.httpConn) == [10, 11, 13, 14])
        #expect(index.links(of: [1, 1]).map(\.httpConn) == [11, 14])
        #expect(index.links(of: [7]).isEmpty)
        #expect(AuthRequestIndex([]).links(of: [1]).isEmpty)
    }
}
