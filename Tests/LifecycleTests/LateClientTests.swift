import Testing
import Capture
import Vocabulary
@testable import Lifecycle

/// Connections that never sent their upgrade request are grouped at the end of the input.
/// One that joins no earlier client becomes a client opened and finished at once
/// (`RoutedStep.lateClient`), kept by neither the router nor the shard: a capture cut off
/// under a flood of 200,000 such connections once held all their timelines and rules at
/// the end, 1 GB of memory. What the report says about them must not change.
@Suite struct LateClientTests {
    static func open(_ conn: ConnectionID, at seconds: Double, ip: String) -> CaptureRecord {
        .open(OpenRecord(conn: conn, t: Wire.us(seconds), client: "\(ip):\(40000 + conn)", server: "127.0.0.1:8080"))
    }

    @Test func connectionsWithoutARequestBecomeClientsFinishedWithTheCapture() throws {
        var wire = Wire()
        wire.records = [Self.open(1, at: 1, ip: "10.0.0.1"), Self.open(2, at: 2, ip: "10.0.0.2"), Self.open(3, at: 3, ip: "10.0.0.2")]
        let spec = try SpecLoader.load("bird")
        var analyzer = LiveAnalyzer(options: AnalyzerOptions(spec: spec))
        var events: [AnalysisEvent] = []
        for record in wire.records { events += analyzer.feed(record) }
        #expect(events.isEmpty)
        var batches = 0
        analyzer.finish(at: Wire.us(10)) { events += $0; batches += 1 }
        let out = Outcome(events: events)
        // Conn 3 overlaps conn 2 of the same address: a client of its own.
        #expect(out.clients.map(\.id) == ["client-1", "client-2", "client-3"])
        #expect(out.clients.map(\.key) == ["10.0.0.1 | - | -", "10.0.0.2 | - | -", "10.0.0.2 | - | -"])
        #expect(out.transitions.map { "\($0.client) \($0.to)" } == [
            "client-1 initialized", "client-1 connecting", "client-2 initialized", "client-2 connecting",
            "client-3 initialized", "client-3 connecting",
        ])
        let ended = events.compactMap { if case .connectionEnded(let s) = $0 { "\(s.conn) \(s.client) \(s.endedAt ?? -1) \(s.end ?? "")" } else { nil } }
        #expect(ended == ["1 client-1 10000000 capture end", "2 client-2 10000000 capture end", "3 client-3 10000000 capture end"])
        // Handed over a client at a time, and none of them kept.
        #expect(batches == 3)
        #expect(analyzer.clientInfos.isEmpty)
        // A second finish finds nothing more.
        #expect(analyzer.finish(at: Wire.us(20)).isEmpty)
    }

    @Test func aConnectionWithoutARequestStillJoinsTheClientItFollows() throws {
        var wire = Wire()
        let a = wire.connect(at: 0)
        wire.end(a, at: 5, side: .server)
        wire.end(a, at: 5, side: .client)
        // The same address again, after conn 1 ended: client-1 reconnecting, request never seen.
        wire.records.append(Self.open(2, at: 6, ip: "10.0.0.1"))
        let out = try analyze(wire, key: .header("X-None"), end: 10)
        let assigned = out.events.compactMap { if case .connection(let c, let client) = $0 { "\(c)=\(client)" } else { nil } }
        #expect(assigned == ["1=client-1", "2=client-1"])
        #expect(out.clients.map(\.id) == ["client-1"])
    }

    @Test func shardedAndOneThreadAnalysesAgreeOnLateClients() throws {
        var records: [CaptureRecord] = []
        for conn in 1...40 { records.append(Self.open(conn, at: Double(conn) / 10, ip: "10.0.\(conn % 3).1")) }
        let spec = try SpecLoader.load("bird")
        var one = LiveAnalyzer(options: AnalyzerOptions(spec: spec))
        var oneEvents: [AnalysisEvent] = []
        for record in records { oneEvents += one.feed(record) }
        oneEvents += one.finish(at: Wire.us(60))
        var shards = [0, 1, 2].map { ClientShard(options: AnalyzerOptions(spec: spec), index: $0, count: 3) }
        var router = ClientRouter(options: AnalyzerOptions(spec: spec))
        var steps: [RoutedStep] = []
        for record in records { router.route(record, into: &steps) }
        router.finish(at: Wire.us(60), into: &steps)
        var perClient: [String: [String]] = [:]
        for step in steps {
            for i in shards.indices where shards[i].holds(step) {
                for event in shards[i].apply(step) { perClient[Self.client(of: event), default: []].append("\(event)") }
            }
        }
        var onePerClient: [String: [String]] = [:]
        for event in oneEvents { onePerClient[Self.client(of: event), default: []].append("\(event)") }
        #expect(perClient == onePerClient)
        #expect(onePerClient.count == 40)
    }

    static func client(of event: AnalysisEvent) -> String {
        switch event {
        case .client(let info): info.id
        case .connection(_, let client): client
        case .transition(let t): t.client
        case .finding(let f): f.client
        case .connectionEnded(let s): s.client
        case .fault(let f): f.client
        case .undetermined(let u): u.client
        }
    }
}
