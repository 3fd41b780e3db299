import CLI
import Capture
import Foundation
import Glibc
import Inputs
import JSON
import Testing
import Vocabulary
import WebSocket

/// The pure parts of `analyze --merge`: the k-way merge by wall clock, the hops clients make
/// between replicas, and the clock corrections they prove.
@Suite struct FleetMergeTests {
    struct ListSource: RecordSource {
        var header: CaptureHeader
        var records: [CaptureRecord]
        var warnings: [String] = []
        mutating func next() throws -> CaptureRecord? { records.isEmpty ? nil : records.removeFirst() }
    }

    static func header(startedAt: Int64, replica: String? = nil) -> CaptureHeader {
        var settings: JSONObject = ["listen": .string("127.0.0.1:1")]
        if let replica { settings[CaptureHeader.replicaKey] = .string(replica) }
        return CaptureHeader(tool: "t", startedAt: startedAt, source: "proxy", settings: settings)
    }

    static func open(_ conn: Int, _ t: Micros) -> CaptureRecord {
        .open(OpenRecord(conn: conn, t: t, client: "127.0.0.1:5\(conn)", server: "127.0.0.1:1"))
    }

    static func request(_ conn: Int, _ t: Micros, agent: String) -> CaptureRecord {
        .upgrade(UpgradeRecord(conn: conn, t: t, from: .client, method: "GET", target: "/app/k", headers: [HeaderField("User-Agent", agent)]))
    }

    static func close(_ conn: Int, _ t: Micros, from: Side = .server, action: FrameAction = .injected) -> CaptureRecord {
        .frame(FrameRecord(conn: conn, t: t, from: from, opcode: .close, masked: from == .client, payload: [0x10, 0x68], action: action))
    }

    static func drain(_ source: MergedRecordSource) throws -> [CaptureRecord] {
        var out: [CaptureRecord] = []
        while let record = try source.next() { out.append(record) }
        return out
    }

    // MARK: ordering

    @Test func recordsComeInWallClockOrderWithConnectionsRenumberedAsTheyAppear() throws {
        // Replica b started 1 s after a: its t=0.5 s is a's t=1.5 s.
        let a = ListSource(header: Self.header(startedAt: 10_000_000), records: [Self.open(1, 1_000_000), Self.close(1, 2_000_000)])
        let b = ListSource(header: Self.header(startedAt: 11_000_000), records: [Self.open(1, 500_000), Self.open(2, 2_500_000)])
        let merged = try MergedRecordSource(replicas: ["a", "b"], sources: [a, b], corrections: [0, 0], names: ["a.jsonl", "b.jsonl"])
        #expect(merged.header.startedAt == 10_000_000)
        #expect(merged.header.source == "proxy", "the replicas' common producer")
        #expect(merged.header.settings["replicas"] == .array(["a", "b"]))
        let records = try Self.drain(merged)
        #expect(records.map(\.time) == [1_000_000, 1_500_000, 2_000_000, 3_500_000])
        #expect(records.map(\.connection) == [1, 2, 1, 3])
        #expect((1...3).map { merged.replica(of: $0) } == [0, 1, 1])
        #expect(merged.replica(of: 0) == nil && merged.replica(of: 4) == nil)
    }

    @Test func aCorrectionMovesAReplicasRecordsLaterAndTheStartFollowsTheEarliest() throws {
        let a = ListSource(header: Self.header(startedAt: 5_000_000), records: [Self.open(1, 100)])
        let b = ListSource(header: Self.header(startedAt: 5_000_000), records: [Self.open(1, 50)])
        let merged = try MergedRecordSource(replicas: ["a", "b"], sources: [a, b], corrections: [0, 30_000], names: ["a", "b"])
        let records = try Self.drain(merged)
        #expect(records.map(\.time) == [100, 30_050])
        #expect(merged.replica(of: 1) == 0 && merged.replica(of: 2) == 1)
    }

    @Test func equalTimesKeepTheReplicasOrderAndEachReplicasOwnOrder() throws {
        let a = ListSource(header: Self.header(startedAt: 0), records: [Self.open(1, 10), Self.close(1, 10)])
        let b = ListSource(header: Self.header(startedAt: 0), records: [Self.open(7, 10)])
        let merged = try MergedRecordSource(replicas: ["a", "b"], sources: [a, b], corrections: [0, 0], names: ["a", "b"])
        let records = try Self.drain(merged)
        #expect(records.map(\.connection) == [1, 1, 2])
        guard case .frame = records[1] else { Issue.record("a's close stays after a's open"); return }
    }

    @Test func aPartsOwnHeaderInTheStreamIsSkipped() throws {
        let a = ListSource(header: Self.header(startedAt: 0), records: [.header(Self.header(startedAt: 0)), Self.open(1, 10)])
        let b = ListSource(header: Self.header(startedAt: 0), records: [])
        let merged = try MergedRecordSource(replicas: ["a", "b"], sources: [a, b], corrections: [0, 0], names: ["a", "b"])
        #expect(try Self.drain(merged).count == 1)
    }

    @Test func timesOutOfRangeAreAUsageErrorNamingTheInput() throws {
        let a = ListSource(header: Self.header(startedAt: 0), records: [Self.open(1, 10)])
        let b = ListSource(header: Self.header(startedAt: 1_000), records: [Self.open(1, Int64.max - 10)])
        let merged = try MergedRecordSource(replicas: ["a", "b"], sources: [a, b], corrections: [0, 0], names: ["a.jsonl", "b.jsonl"])
        let error = #expect(throws: UsageError.self) { _ = try Self.drain(merged) }
        #expect(error?.message.contains("b.jsonl") == true)
        let far = ListSource(header: Self.header(startedAt: Int64.max - 5), records: [])
        let error2 = #expect(throws: UsageError.self) {
            _ = try MergedRecordSource(replicas: ["a", "far"], sources: [a, far], corrections: [0, 10], names: ["a.jsonl", "far.jsonl"])
        }
        #expect(error2?.message.contains("far.jsonl") == true)
    }

    @Test func warningsNameTheirReplica() throws {
        let a = ListSource(header: Self.header(startedAt: 0), records: [], warnings: ["torn last line"])
        let b = ListSource(header: Self.header(startedAt: 0), records: [])
        let merged = try MergedRecordSource(replicas: ["a", "b"], sources: [a, b], corrections: [0, 0], names: ["a", "b"])
        #expect(merged.warnings == ["a: torn last line"])
    }

    // MARK: hops

    static func evidence(_ replicas: [(startedAt: Int64, records: [CaptureRecord])]) -> HopEvidence {
        var evidence = HopEvidence(keyOf: { open, request in "\(open?.client.split(separator: ":").first ?? "?")|\(request?.header("User-Agent") ?? "-")" })
        for (i, r) in replicas.enumerated() {
            evidence.begin(replica: i, startedAt: r.startedAt)
            for record in r.records { evidence.observe(record) }
        }
        return evidence
    }

    @Test func aClientsMoveToAnotherReplicaIsAHopFromItsDropToItsReopen() {
        let evidence = Self.evidence([
            (1_000, [Self.open(1, 0), Self.request(1, 1, agent: "c1"), Self.close(1, 500), Self.close(1, 600, from: .client)]),
            (2_000, [Self.open(4, 0), Self.request(4, 1, agent: "c1")]),
        ])
        #expect(evidence.hops() == [ClockHop(from: 0, to: 1, droppedAt: 1_500, reopenedAt: 2_000, key: "127.0.0.1|c1")])
        #expect(evidence.warning == nil)
    }

    @Test func noHopWithoutADropOrWithinOneReplicaOrBetweenTwoClients() {
        let evidence = Self.evidence([
            // c1: conn 1 never ends before the capture does (and its next is on another replica:
            // two at once, so c1 is no evidence); c2: two connections on one replica.
            (0, [Self.open(1, 0), Self.request(1, 1, agent: "c1"), Self.open(2, 5), Self.request(2, 6, agent: "c2"),
                 Self.close(2, 10), Self.open(3, 20), Self.request(3, 21, agent: "c2"),
                 // A close the fault dropped never reached the client: not a drop.
                 Self.open(5, 30), Self.request(5, 31, agent: "c3"), Self.close(5, 40, action: .dropped)]),
            (0, [Self.open(1, 50), Self.request(1, 51, agent: "c1"), Self.open(2, 60), Self.request(2, 61, agent: "c3"),
                 Self.open(3, 70), Self.request(3, 71, agent: "c4")]),
        ])
        #expect(evidence.hops().isEmpty)
    }

    @Test func aClientSeenEndOnTheClientsLegIsADropAnUpstreamEndIsNot() {
        let evidence = Self.evidence([
            (0, [Self.open(1, 0), Self.request(1, 1, agent: "c"), .end(EndRecord(conn: 1, t: 5, side: .server, kind: .fin, leg: .upstream)),
                 .end(EndRecord(conn: 1, t: 9, side: .server, kind: .rst, leg: .client))]),
            (0, [Self.open(1, 20), Self.request(1, 21, agent: "c")]),
        ])
        #expect(evidence.hops().map(\.droppedAt) == [9])
    }

    @Test func aReconnectFarBeforeTheDropIsAnotherClientOfTheKeyNotAHop() {
        let evidence = Self.evidence([
            (0, [Self.open(1, 0), Self.request(1, 1, agent: "c"), Self.close(1, 10_000_000)]),
            (0, [Self.open(1, 2_000_000), Self.request(1, 2_000_001, agent: "c")]),
        ])
        #expect(evidence.hops().count == 1)
        #expect(evidence.hops(plausible: 500_000).isEmpty, "8 s before the drop: an overlapping client, not skew")
        #expect(evidence.hops(plausible: 9_000_000).count == 1)
        // One such overlap anywhere makes the whole key several clients: its other hops go too.
        let mixed = Self.evidence([
            (0, [Self.open(1, 0), Self.request(1, 1, agent: "c"), Self.close(1, 10_000_000),
                 Self.open(2, 20_000_000), Self.request(2, 20_000_001, agent: "c")]),
            (0, [Self.open(1, 2_000_000), Self.request(1, 2_000_001, agent: "c"), Self.close(1, 19_990_000)]),
        ])
        #expect(mixed.hops(plausible: 500_000).isEmpty)
        #expect(mixed.hops().count == 2)
    }

    @Test func aKeyWithTwoConnectionsAtOnceOnOneReplicaIsSeveralClientsAndNoEvidence() {
        let evidence = Self.evidence([
            // Two clients behind one NAT with one User-Agent: "c" twice at once on replica 0.
            (0, [Self.open(1, 0), Self.request(1, 1, agent: "c"), Self.open(2, 5), Self.request(2, 6, agent: "c"),
                 Self.close(1, 100), Self.close(2, 200)]),
            (0, [Self.open(1, 90), Self.request(1, 91, agent: "c")]),
        ])
        #expect(evidence.hops().isEmpty)
        // The same hop without the overlap is evidence.
        let single = Self.evidence([
            (0, [Self.open(1, 0), Self.request(1, 1, agent: "c"), Self.close(1, 100)]),
            (0, [Self.open(1, 90), Self.request(1, 91, agent: "c")]),
        ])
        #expect(single.hops().map(\.requiredShift) == [11])
    }

    @Test func connectionsPastTheLimitAreLeftOutAndSaidSo() {
        var evidence = HopEvidence(keyOf: { _, _ in "k" }, limit: 2)
        evidence.begin(replica: 0, startedAt: 0)
        for conn in 1...5 { evidence.observe(Self.open(conn, Int64(conn))) }
        #expect(evidence.skipped == 3)
        #expect(evidence.warning?.contains("first 2 connections") == true)
    }

    // MARK: clock skew

    @Test func noCorrectionWhenEveryReconnectFollowsItsDrop() throws {
        let hops = [ClockHop(from: 0, to: 1, droppedAt: 100, reopenedAt: 5_000, key: "k"),
                    ClockHop(from: 1, to: 0, droppedAt: 6_000, reopenedAt: 9_000, key: "k")]
        let estimate = try ClockSkew.estimate(replicas: 2, hops: hops).get()
        #expect(estimate.corrections == [0, 0])
        #expect(estimate.evidence == [nil, nil])
    }

    @Test func aReconnectBeforeItsDropMovesItsReplicaJustPastTheDrop() throws {
        let hop = ClockHop(from: 0, to: 2, droppedAt: 1_030_000, reopenedAt: 1_004_000, key: "k")
        let estimate = try ClockSkew.estimate(replicas: 3, hops: [hop]).get()
        #expect(estimate.corrections == [0, 0, 26_001])
        #expect(estimate.evidence[2] == hop)
        #expect(estimate.spread == 26_001)
    }

    @Test func correctionsAddUpAlongAChainAndTheStrongestHopOfAPairWins() throws {
        let hops = [ClockHop(from: 0, to: 1, droppedAt: 100, reopenedAt: 90, key: "x"),
                    ClockHop(from: 0, to: 1, droppedAt: 100, reopenedAt: 80, key: "y"),
                    ClockHop(from: 1, to: 2, droppedAt: 100, reopenedAt: 95, key: "z")]
        let estimate = try ClockSkew.estimate(replicas: 3, hops: hops).get()
        #expect(estimate.corrections == [0, 21, 27])
        #expect(estimate.evidence[1]?.key == "y")
    }

    @Test func aCorrectionStaysWithinWhatTheOtherHopsAllow() throws {
        // b must move >= 11 for hop 1, and hop 2 (b -> a, 20 before a's reopen) still holds at 11.
        let hops = [ClockHop(from: 0, to: 1, droppedAt: 100, reopenedAt: 90, key: "x"),
                    ClockHop(from: 1, to: 0, droppedAt: 200, reopenedAt: 220, key: "y")]
        #expect(try ClockSkew.estimate(replicas: 2, hops: hops).get().corrections == [0, 11])
    }

    @Test func hopsThatDemandOppositeShiftsAreAContradiction() {
        let hops = [ClockHop(from: 0, to: 1, droppedAt: 100, reopenedAt: 50, key: "x"),
                    ClockHop(from: 1, to: 0, droppedAt: 100, reopenedAt: 50, key: "y")]
        guard case .failure(.contradiction) = ClockSkew.estimate(replicas: 2, hops: hops) else {
            Issue.record("two reconnects each before the other's drop cannot both be corrected")
            return
        }
    }

    @Test func extremeTimesAreClampedNotOverflowed() throws {
        let hops = [ClockHop(from: 0, to: 1, droppedAt: Int64.max, reopenedAt: Int64.min, key: "x"),
                    ClockHop(from: 1, to: 2, droppedAt: Int64.max, reopenedAt: Int64.min, key: "y"),
                    ClockHop(from: 5, to: 1, droppedAt: 0, reopenedAt: 0, key: "out of range")]
        let estimate = try ClockSkew.estimate(replicas: 3, hops: hops).get()
        #expect(estimate.corrections[2] > estimate.corrections[1] && estimate.corrections[1] > 0)
    }

    // MARK: files

    /// Writes capture files (a header and open records) into a fresh directory.
    static func files(_ specs: [(name: String, header: String, opens: [(conn: Int, t: Int)])]) throws -> [String] {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("faultline-merge-\(getpid())-\(UInt32.random(in: 0 ... .max))")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        return try specs.map { spec in
            let path = directory.appendingPathComponent(spec.name).path
            var text = spec.header + "\n"
            for open in spec.opens {
                text += "{\"type\":\"open\",\"conn\":\(open.conn),\"t\":\(open.t),\"client\":\"127.0.0.1:\(open.conn)\",\"server\":\"127.0.0.1:2\"}\n"
            }
            try text.write(toFile: path, atomically: true, encoding: .utf8)
            return path
        }
    }

    static func header(_ replica: String, startedAt: Int, part: Int? = nil) -> String {
        let rotation = part.map { ",\"recording\":\"00000000000000a1\",\"part\":\($0)" } ?? ""
        return "{\"type\":\"header\",\"format\":\"faultline-capture\",\"version\":1,\"tool\":\"t\",\"started_at_us\":\(startedAt),\"source\":\"proxy\",\"settings\":{\"replica\":\"\(replica)\"}\(rotation)}"
    }

    @Test func aReplicasRotatedPartsAreOneReplicaInTheMerge() throws {
        // Replica a in two parts, given out of order; replica b in one file.
        let paths = try Self.files([
            ("a.0002.jsonl", Self.header("a", startedAt: 1_000, part: 2), [(2, 300)]),
            ("b.jsonl", Self.header("b", startedAt: 1_100), [(1, 50), (2, 250)]),
            ("a.0001.jsonl", Self.header("a", startedAt: 1_000, part: 1), [(1, 100)]),
        ])
        let plan = try FleetMerge.open(paths, options: .init(), keyOf: { open, _ in open?.client ?? "?" }, maxSkew: 50_000, command: "test")
        #expect(plan.source.replicas == ["a", "b"])
        var times: [Micros] = [], replicas: [Int] = []
        while let record = try plan.source.next() {
            times.append(record.time ?? -1)
            replicas.append(record.connection.flatMap(plan.source.replica(of:)) ?? -1)
        }
        #expect(times == [100, 150, 300, 350])
        #expect(replicas == [0, 1, 0, 1])
    }

    @Test func aMergeOfOneReplicaOrOfAPipeIsRefused() throws {
        let paths = try Self.files([("a.0001.jsonl", Self.header("a", startedAt: 0, part: 1), []),
                                    ("a.0002.jsonl", Self.header("a", startedAt: 0, part: 2), [])])
        let one = #expect(throws: UsageError.self) {
            _ = try FleetMerge.open(paths, options: .init(), keyOf: { _, _ in "" }, maxSkew: 0, command: "test")
        }
        #expect(one?.message.contains("the parts of one rotated recording") == true)
        let piped = #expect(throws: UsageError.self) {
            _ = try FleetMerge.open(["-", paths[0]], options: .init(), keyOf: { _, _ in "" }, maxSkew: 0, command: "test")
        }
        #expect(piped?.message.contains("<stdin>") == true)
    }

    // MARK: names

    @Test func replicasAreNamedByTheirHeaderElseTheirFileAndRepeatsAreTold() {
        let names = FleetMerge.replicaNames(
            [Self.header(startedAt: 0, replica: "east"), Self.header(startedAt: 0), Self.header(startedAt: 0, replica: "east")],
            files: ["/x/a.jsonl", "/y/b.jsonl.zst", "c.jsonl"])
        #expect(names == ["east#1", "b.jsonl.zst", "east#3"])
    }
}
