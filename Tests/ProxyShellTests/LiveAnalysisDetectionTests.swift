import Capture
import Lifecycle
import ProtocolTable
import Protocols
import Testing
import Vocabulary
import WebSocket
@testable import ProxyShell

/// `proxy --live` without `--spec` judges its clients by the spec the protocol table's
/// detection chooses, as `analyze` does on the capture, not by Bird's whatever they speak.
@Suite struct LiveAnalysisDetectionTests {
    /// A protocol only this test knows, claimed by its subprotocol, judged by `websocket`.
    struct ToyProtocol: WireProtocol {
        static let key = "toy"
        static let summary = "a test's toy protocol"
        static func claim(upgrade: UpgradeEvidence) -> String? {
            upgrade.subprotocols.contains("toy") ? "the client offered the toy subprotocol" : nil
        }
        var dialect: String? { nil }
        mutating func decode(_ payload: [UInt8]) -> RealtimeEvent? { nil }
        mutating func adopt(_ event: RealtimeEvent) -> RealtimeEvent? { event }
    }

    static let table = ProtocolTable.standard.adding(
        ProtocolTable.Registration(ToyProtocol.self, defaultSpec: "websocket", make: { _ in ToyProtocol() }))

    static func records(subprotocol: String) -> [CaptureRecord] {
        [
            .open(OpenRecord(conn: 1, t: 0, client: "127.0.0.1:5000", server: "127.0.0.1:6000")),
            .upgrade(UpgradeRecord(conn: 1, t: 1_000, from: .client, method: "GET", target: "/chat",
                                   headers: [HeaderField("Sec-WebSocket-Protocol", subprotocol)])),
            .upgrade(UpgradeRecord(conn: 1, t: 2_000, from: .server, status: 101, reason: "Switching Protocols", headers: [])),
        ]
    }

    static func run(_ records: [CaptureRecord]) throws -> (spec: String, lines: [String]) {
        let bird = try SpecLoader.load("bird")
        let analysis = LiveAnalysis(detecting: bird, transitions: true, table: table) { try? SpecLoader.load($0) }
        var lines: [String] = []
        analysis.emit = { lines.append($0) }
        for record in records { analysis.feed(record) }
        analysis.finish(at: 10_000)
        return (analysis.spec.name, lines)
    }

    @Test func theDetectedEntrysSpecJudgesTheClients() throws {
        let (spec, lines) = try Self.run(Self.records(subprotocol: "toy"))
        #expect(spec == "websocket")
        #expect(lines.first == "live analysis: spec websocket: protocol toy chosen on conn 1: the client offered the toy subprotocol; --spec overrides")
        // The held records were judged once the spec was chosen: the client was seen.
        #expect(lines.contains { $0.contains("new client") || $0.contains("client-1") }, "\(lines)")
        #expect(lines.last?.hasPrefix("live analysis (spec websocket): 1 client, 1 connection") == true, "\(lines)")
    }

    @Test func withNoClaimTheFallbackSpecJudgesAndTheLineSaysSo() throws {
        let (spec, lines) = try Self.run(Self.records(subprotocol: "chat"))
        #expect(spec == "bird")
        #expect(lines.first?.hasPrefix("live analysis: spec bird (the default): no entry of the protocol table recognized") == true, "\(lines)")
        #expect(lines.last?.hasPrefix("live analysis (spec bird): 1 client, 1 connection") == true, "\(lines)")
    }
}
