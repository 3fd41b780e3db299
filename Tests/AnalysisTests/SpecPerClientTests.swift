import Analysis
import Capture
import Foundation
import Lifecycle
import Reports
import Testing
import TestSupport
import Vocabulary
import WebSocket

/// Without `--spec`, each client is judged by the built-in spec of the pack detected on
/// its own upgrade and first messages; a client that shows no pack is judged by what
/// detection on the whole input chose. Captures/mixed-protocols.jsonl holds a Bird sim
/// client, python-socketio, gql and pysignalr through one proxy (Captures/mixed-protocols.sh).
@Suite struct SpecPerClientTests {
    static let mixed = TestEnvironment.path("Captures/mixed-protocols.jsonl")

    static func report(_ path: String, jobs: Int = 1, spec: String? = nil) throws -> AnalysisReport {
        try AnalysisRun(inputs: [path], options: AnalysisOptions(spec: SpecChoice(named: spec), jobs: jobs)).run()
    }

    static func rules(of client: AnalysisReport.Client) -> [String] { client.findings.map(\.rule) }

    @Test func eachClientIsJudgedByItsOwnPack() throws {
        let report = try Self.report(Self.mixed)
        #expect(report.clients.map(\.spec) == ["bird", "socketio", "graphql-ws", "signalr"])
        #expect(report.specsUsed.map(\.spec.name) == ["bird", "socketio", "graphql-ws", "signalr"])
        #expect(report.specsUsed.map(\.clients) == [1, 1, 1, 1])
        // Bird's own deviation on the Bird client, graphql-ws's on the gql client (by
        // operation id, which only that pack decodes), nothing on the other two.
        #expect(Self.rules(of: report.clients[0]) == ["trigger.unsubscribed", "trigger.unsubscribed"])
        #expect(Self.rules(of: report.clients[1]).isEmpty)
        #expect(Self.rules(of: report.clients[2]) == ["channels.resubscribe"])
        #expect(Self.rules(of: report.clients[3]).isEmpty)
        // Each pack decoded its client's events: no client fell back to connection level.
        #expect(!report.warnings.contains { $0.contains("analyzed at connection level") }, "\(report.warnings)")
        // Each client's timeline speaks its pack's states and handshakes.
        #expect(report.clients[1].transitions.contains { $0.cause.hasPrefix("handshake socket_id") })
        #expect(report.clients[2].transitions.contains { $0.cause == "handshake connection_ack" })
    }

    @Test func oneSpecNamedJudgesEveryClientAndMissesTheOtherPacksDeviations() throws {
        let report = try Self.report(Self.mixed, spec: "bird")
        #expect(report.specsUsed.isEmpty && report.clients.allSatisfy { $0.spec == nil })
        #expect(report.findings.map(\.rule) == ["trigger.unsubscribed", "trigger.unsubscribed"])
        #expect(report.warnings.filter { $0.contains("no bird events seen") }.count == 3, "\(report.warnings)")
        #expect(!TextReport.render(report).contains("specs per client"))
    }

    @Test func theReportsSayWhichSpecJudgedWhichClient() throws {
        let report = try Self.report(Self.mixed)
        let text = TextReport.render(report)
        #expect(text.contains("\nspecs per client: bird 1 client, socketio 1 client, graphql-ws 1 client, signalr 1 client ("))
        #expect(text.contains("connections: 3, 4  spec graphql-ws\n"), "\(text)")
        let json = JSONReport.render(report)
        #expect(json.contains(#""spec":"bird","specs":[{"spec":"bird","clients":1},{"spec":"socketio","clients":1},"#
                              + #"{"spec":"graphql-ws","clients":1},{"spec":"signalr","clients":1}],"inputs":"#), "\(json)")
        // The top-level spec, the four in "specs", then each client's own.
        #expect(json.components(separatedBy: #""spec":""#).count - 1 == 9)
        // JUnit: each client's cases are its own spec's rules.
        let junit = JUnitReport.render(report)
        let graphqlRules = try SpecLoader.load("graphql-ws").rules
        #expect(junit.contains(#"<testsuite name="client-3" tests="\#(graphqlRules.count)""#), "\(junit)")
        #expect(junit.contains(#"<property name="spec" value="graphql-ws"/>"#))
    }

    @Test func twoJobsGiveOneJobsReport() throws {
        let one = try Self.report(Self.mixed, jobs: 1)
        let two = try Self.report(Self.mixed, jobs: 2)
        for format in ReportFormat.allCases { #expect(format.render(two) == format.render(one), "\(format.rawValue)") }
    }

    /// A single-pack capture stays as it was: one spec, no line, no field.
    @Test func aSinglePackCaptureNamesNoSpecsPerClient() throws {
        let report = try Self.report(TestEnvironment.path("Captures/graphql-ws-clean.jsonl"))
        #expect(report.spec.name == "graphql-ws" && report.specsUsed.isEmpty && report.clients.allSatisfy { $0.spec == nil })
        #expect(!JSONReport.render(report).contains(#""specs":"#))
    }

    // MARK: detection per client, bounded

    static let specs = ClientSpecs(fallback: AnalyzerOptions(spec: try! SpecLoader.load("socketio"))) { try? SpecLoader.load($0) }

    static func open(_ conn: ConnectionID, at t: Micros, path: String) -> [CaptureRecord] {
        [.open(OpenRecord(conn: conn, t: t, client: "127.0.0.1:\(5000 + Int(conn))", server: "127.0.0.1:6000")),
         .upgrade(UpgradeRecord(conn: conn, t: t + 100, from: .client, method: "GET", target: path, headers: [])),
         .upgrade(UpgradeRecord(conn: conn, t: t + 200, from: .server, status: 101, reason: "Switching Protocols", headers: []))]
    }

    static func text(_ conn: ConnectionID, at t: Micros, _ text: String, from: Side = .server) -> CaptureRecord {
        .frame(FrameRecord(conn: conn, t: t, from: from, opcode: .text, masked: from == .client, payload: Array(text.utf8)))
    }

    /// Runs the records; returns the events with the step that revealed them, and the specs.
    static func analyze(_ records: [CaptureRecord], end: Micros) -> (events: [(AnalysisEvent, Int)], specs: [Int16]) {
        var analyzer = SpecPerClientAnalyzer(specs: specs)
        var events: [(AnalysisEvent, Int)] = []
        for record in records { analyzer.feed(record) { found, step, _ in events += found.map { ($0, step) } } }
        analyzer.finish(at: end) { found, step, _ in events += found.map { ($0, step) } }
        return (events, analyzer.specNumbers)
    }

    @Test func aClientWhoseMessagesNeverDecideIsJudgedByTheFallback() {
        // Nine messages no entry claims: detection gives up after eight.
        var records = Self.open(1, at: 0, path: "/chat")
        for i in 0..<9 { records.append(Self.text(1, at: 1_000 + Micros(i) * 1_000, "hello \(i)")) }
        records += Self.open(2, at: 20_000, path: "/websocket?vsn=2.0.0")
        let (events, numbers) = Self.analyze(records, end: 100_000)
        #expect(numbers.map { Self.specs.name(Int($0)) } == ["socketio", "phoenix"])
        // The first client's events came before the input ended: it was decided on its messages.
        let clients = events.compactMap { if case .client(let info) = $0.0 { (info.id, $0.1) } else { nil } }
        #expect(clients.map(\.0) == ["client-1", "client-2"])
    }

    @Test func aSilentClientIsDecidedAfterPatienceNotHeldToTheEnd() {
        var records = Self.open(1, at: 0, path: "/chat")
        // Another client's records carry time on: the router's sweeps run past the patience.
        records += Self.open(2, at: 500_000, path: "/socket.io/?EIO=4&transport=websocket")
        for i in 1...4 { records.append(Self.text(2, at: Micros(i) * 1_000_000, "2", from: .server)) }
        var analyzer = SpecPerClientAnalyzer(specs: Self.specs)
        var seenBeforeEnd: [String] = []
        for record in records {
            analyzer.feed(record) { found, _, _ in
                for case .client(let info) in found { seenBeforeEnd.append(info.id) }
            }
        }
        #expect(seenBeforeEnd == ["client-2", "client-1"], "client-1 waited at most the patience, not to the end")
        #expect(analyzer.specNumbers.map { Self.specs.name(Int($0)) } == ["socketio", "socketio"])
    }
}
