import Capture
import ControlAPI
import Faults
import JSON
import Lifecycle
import Vocabulary
import WebSocket
@testable import UI

/// A control backend with a real fault engine and a fixed set of open connections; it
/// records which connections were told that their rules changed.
final class FakeBackend: ControlBackend {
    let faultEngine = FaultEngine()
    var openConnections: [ConnectionID]
    var changed: [ConnectionID?] = []

    init(open: [ConnectionID]) { openConnections = open }

    func connectionSummaries() -> [JSONValue] { openConnections.map { ["id": .int(Int64($0))] } }
    func faultsChanged(connection: ConnectionID?) -> Bool {
        changed.append(connection)
        return connection.map(openConnections.contains) ?? true
    }
    func metrics() -> ControlMetrics { ControlMetrics() }
}

/// Records of a short session, as the proxy makes them.
enum Session {
    static func us(_ seconds: Double) -> Micros { Micros(seconds * 1_000_000) }

    static func open(_ conn: ConnectionID, at t: Double, path: String = "/app/key?protocol=7", agent: String = "sim/1.0") -> [CaptureRecord] {
        [
            .open(OpenRecord(conn: conn, t: us(t), client: "127.0.0.1:\(40_000 + conn)", server: "127.0.0.1:9000")),
            .upgrade(UpgradeRecord(conn: conn, t: us(t), from: .client, method: "GET", target: path,
                                   headers: [HeaderField("Host", "h"), HeaderField("User-Agent", agent)])),
            .upgrade(UpgradeRecord(conn: conn, t: us(t), from: .server, status: 101, reason: "Switching Protocols", headers: [])),
        ]
    }

    static func text(_ conn: ConnectionID, at t: Double, from side: Side, _ text: String) -> CaptureRecord {
        .frame(FrameRecord(conn: conn, t: us(t), from: side, opcode: .text, masked: side == .client, payload: Array(text.utf8)))
    }

    static func model() throws -> UIModel { UIModel(spec: try SpecLoader.load("bird")) }

    /// Feeds records to the model and to an analyzer whose events go to the model too, the
    /// way the proxy's wiring does.
    static func feed(_ records: [CaptureRecord], to model: UIModel, analyzer: inout LiveAnalyzer) {
        for record in records {
            model.observe(record)
            for event in analyzer.feed(record) { model.observe(event) }
        }
    }
}
