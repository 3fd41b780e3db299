import Lifecycle
import Vocabulary
@testable import Reports

import Testing

/// The builder keeps transitions and connection bars in a denser form than the report's
/// (`KeptTransition`, `KeptConnection`): what goes in must come out of the report the same,
/// every optional field set or not, and shards' builders that numbered the state names in
/// another order must merge into the same report as one builder.
@Suite struct ReportKeptEntriesTests {
    static func spec() throws -> LifecycleSpec { try SpecLoader.load("bird") }

    @Test func theEntriesAreSmallerThanTheReportsTypes() {
        #expect(MemoryLayout<ReportBuilder.KeptTransition>.stride == 40)
        #expect(MemoryLayout<ReportBuilder.KeptTransition>.stride < MemoryLayout<Transition>.stride)
        #expect(MemoryLayout<ReportBuilder.KeptConnection>.stride == 56)
        #expect(MemoryLayout<ReportBuilder.KeptConnection>.stride < MemoryLayout<ConnectionLifespan>.stride)
        #expect(MemoryLayout<ReportBuilder.KeptFinding>.stride == 32)
    }

    /// A kept finding's bytes are allocated once at their size, not grown by doubling as
    /// they are written (which left up to half of each allocation unused).
    @Test func aKeptFindingsBytesSitInRoomOfTheirSize() {
        for evidence in [0, 1, 7, 100] {
            let finding = Finding(rule: "failed.retried", severity: .error, party: .client, client: "c1", conn: 7, t: 12,
                                  message: String(repeating: "m", count: 37 * evidence + 5),
                                  evidence: (0..<evidence).map { Evidence(conn: $0, t: 1, from: .server, summary: "close 4009 \($0)") },
                                  causedByFault: evidence == 7 ? "drop" : nil)
            let bytes = ReportBuilder.KeptFinding(finding).bytes
            // malloc rounds a block up to 16 bytes, which the array's capacity counts.
            #expect(bytes.capacity - bytes.count < 16, "\(bytes.count) bytes in room for \(bytes.capacity)")
            #expect(ReportBuilder.KeptFinding(finding).finding(of: "c1") == finding)
        }
    }

    @Test func everyFieldOfATransitionComesBack() throws {
        let client = ClientInfo(id: "c1", key: "k", firstSeen: 1)
        let transitions = [
            Transition(client: "c1", conn: nil, t: 1, from: nil, to: "initialized", cause: "first observation", evidence: nil),
            Transition(client: "c1", conn: 7, t: 2, from: "initialized", to: "connecting", cause: "tcp open", evidence: nil),
            Transition(client: "c1", conn: 0, t: 3, from: "connecting", to: "connecting", cause: "connection 0", evidence: nil),
            Transition(client: "c1", conn: nil, t: 4, from: "connecting", to: "connecting", cause: "no connection", evidence: nil),
            Transition(client: "c1", conn: -3, t: .min, from: "connecting", to: "initialized", cause: "", evidence: nil),
            Transition(client: "c1", conn: .max, t: .max, from: "initialized", to: "ärger \u{202E}", cause: "close 4009 from server", evidence: nil),
        ]
        var builder = ReportBuilder()
        builder.add(.client(client))
        for t in transitions { builder.add(.transition(t)) }
        let report = builder.build(spec: try Self.spec(), inputs: [], grouping: "g", prefix: nil)
        #expect(report.clients.first?.transitions == transitions)
        #expect(report.clients.first?.finalState == "ärger \u{202E}")
    }

    @Test func everyFieldOfAConnectionBarComesBack() throws {
        var bars: [ConnectionLifespan] = []
        var bare = ConnectionLifespan(conn: 1, client: "c1", openedAt: 10)
        bars.append(bare)
        bare.conn = 2
        bare.connectedAt = 0
        bare.endedAt = .max
        bare.closeCode = 0
        bare.closedBy = .client
        bare.end = "close 0 from client"
        bars.append(bare)
        var server = ConnectionLifespan(conn: 3, client: "c1", openedAt: .min)
        server.endedAt = -5
        server.closedBy = .server
        server.closeCode = .max
        server.end = "RST"
        bars.append(server)
        var ended = ConnectionLifespan(conn: 4, client: "c1", openedAt: 20)
        ended.endedAt = 30
        ended.end = "capture end"
        bars.append(ended)
        var builder = ReportBuilder()
        builder.add(.client(ClientInfo(id: "c1", key: "k", firstSeen: 1)))
        for bar in bars { builder.add(.connectionEnded(bar)) }
        let report = builder.build(spec: try Self.spec(), inputs: [], grouping: "g", prefix: nil)
        #expect(report.clients.first?.connections == bars)
    }

    /// Two shards meet the states in opposite orders, so their tables number them apart;
    /// merged, each transition keeps its own names (and a full log's ring too).
    @Test func shardsNumberingStatesApartMergeIntoTheSameReport() throws {
        func transitions(of client: String, _ states: [String]) -> [Transition] {
            (0..<50).map { n in
                Transition(client: client, conn: n, t: Micros(n), from: n == 0 ? nil : states[(n - 1) % states.count],
                           to: states[n % states.count], cause: "step \(n)", evidence: nil)
            }
        }
        let first = transitions(of: "a", ["one", "two", "three"])
        let second = transitions(of: "b", ["three", "four", "one", "two"])
        var parts = [ReportBuilder(), ReportBuilder()]
        for (i, (client, list)) in [("a", first), ("b", second)].enumerated() {
            parts[i].add([.client(ClientInfo(id: client, key: client, firstSeen: 0))], step: i, newClient: i)
            parts[i].add(list.map { .transition($0) }, step: i + 2)
        }
        var one = ReportBuilder()
        one.add(.client(ClientInfo(id: "a", key: "a", firstSeen: 0)))
        one.add(.client(ClientInfo(id: "b", key: "b", firstSeen: 0)))
        one.add((first + second).map { .transition($0) })
        let merged = ReportBuilder.merged(parts).build(spec: try Self.spec(), inputs: [], grouping: "g", prefix: nil)
        let alone = one.build(spec: try Self.spec(), inputs: [], grouping: "g", prefix: nil)
        let limits = ReportLimits.standard
        let kept = { (list: [Transition]) in Array(list.prefix(limits.head) + list.suffix(limits.tail)) }
        #expect(merged.clients.map(\.transitions) == [kept(first), kept(second)])
        #expect(merged.clients.map(\.transitions) == alone.clients.map(\.transitions))
        #expect(merged.clients.map(\.finalState) == ["two", "four"])
    }

    @Test func everyFieldOfAFindingComesBack() throws {
        let findings = [
            Finding(rule: "failed.retried", severity: .error, party: .client, client: "c1", conn: 7, t: 12,
                    message: "new connection 10.28 s after close 4009 from server (state failed must not retry)",
                    evidence: [Evidence(conn: 3, t: 5, from: .server, summary: "close 4009 'Connection terminated'"),
                               Evidence(conn: 7, t: 12, from: .client, summary: "tcp open from 10.0.0.84:40063")]),
            Finding(rule: "server.pong-missing", severity: .warning, party: .server, client: "c1", conn: -1, t: .min,
                    message: "", evidence: [], causedByFault: "stall-pongs \u{1b}[31m"),
            Finding(rule: "r", severity: .warning, party: .client, client: "c1", conn: .max, t: .max,
                    message: "ärger \u{202E} \u{0}", evidence: (0..<300).map {
                        Evidence(conn: $0, t: Micros($0) - 150, from: $0 % 3 == 0 ? nil : $0 % 3 == 1 ? .client : .server,
                                 summary: String(repeating: "é", count: $0))
                    }, afterFault: ""),
        ]
        var builder = ReportBuilder(limits: ReportLimits(head: 10, tail: 0))
        builder.add(.client(ClientInfo(id: "c1", key: "k", firstSeen: 1)))
        for f in findings { builder.add(.finding(f)) }
        let report = builder.build(spec: try Self.spec(), inputs: [], grouping: "g", prefix: nil)
        #expect(report.clients.first?.findings == findings)
        #expect(Array(report.findings) == findings)
    }

    @Test func aNameTableNumbersEachNameOnce() {
        var table = NameTable()
        #expect(table.number(of: "connected") == 0)
        #expect(table.number(of: "failed") == 1)
        #expect(table.number(of: "connected") == 0)
        var other = NameTable()
        _ = other.number(of: "failed")
        _ = other.number(of: "unavailable")
        #expect(table.adopt(other) == [1, 2])
        #expect(table.name(of: 2) == "unavailable")
    }
}
