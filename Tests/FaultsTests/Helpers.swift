import Capture
import ProtocolTable
import Protocols
import Vocabulary
import WebSocket
@testable import Faults

/// Shorthands for fault tests: frames as faults see them, and a connection driven by hand.
enum Make {
    static func rule(_ text: String) -> FaultRule { try! FaultRule.parse(text) }

    /// `dialect`: the prefix the connection already speaks; nil learns it from this event.
    static func event(_ name: String, from side: Side, data: String = "{}", dialect: String? = nil) -> FaultFrame {
        text(#"{"event":"\#(name)","data":\#(data)}"#, from: side, dialect: dialect)
    }

    static func handshake(prefix: String = "bird") -> FaultFrame {
        text(#"{"event":"\#(prefix):connection_established","data":"{\"socket_id\":\"1234.5678\",\"activity_timeout\":120}"}"#,
             from: .server)
    }

    /// A text frame with the event the Bird/Pusher table entry decodes from it, as the relay
    /// hands it to the faults (the dialect learned from the event itself).
    static func text(_ text: String, from side: Side, dialect: String? = nil) -> FaultFrame {
        var wire = ProtocolTable.standard.entry(for: "bird", prefix: dialect)
        let payload = Array(text.utf8)
        return FaultFrame(from: side, opcode: .text, payload: payload, event: wire.decode(payload))
    }

    /// A context whose connection speaks Bird/Pusher (the handshake faults ask its entry).
    static func context(_ now: Micros = 0, seed: UInt64 = 1) -> FaultContext {
        FaultContext(now: now, random: SeededGenerator(seed: seed), wire: bird)
    }

    /// The Bird/Pusher table entry, as a connection's relay holds it.
    static var bird: any WireProtocol { ProtocolTable.standard.entry(for: "bird") }

    /// A connection whose WebSocket opened at `openedAt` under `rules`.
    static func connection(_ rules: [String], openedAt: Micros = 0, proxyStart: Micros = 0, seed: UInt64 = 0,
                           engine: FaultEngine? = nil) -> (ConnectionFaults, [FaultOutcome]) {
        let engine = engine ?? FaultEngine(rules: rules.map(rule), seed: seed, proxyStart: proxyStart)
        var faults = ConnectionFaults(engine: engine, conn: engine.connectionCount + 1, openedAt: openedAt)
        var outcomes = faults.upgradeRequested(clientKey: "test-agent /app/key", now: openedAt)
        outcomes += faults.websocketOpened(now: openedAt)
        return (faults, outcomes)
    }
}

extension FaultVerdict {
    var dropped: Bool { frame == .drop }
}
