import Capture
import Vocabulary
import WebSocket
@testable import Faults

/// Shorthands for fault tests: frames as faults see them, and a connection driven by hand.
enum Make {
    static func rule(_ text: String) -> FaultRule { try! FaultRule.parse(text) }

    static func event(_ name: String, from side: Side, data: String = "{}") -> FaultFrame {
        let text = #"{"event":"\#(name)","data":\#(data)}"#
        return FaultFrame(from: side, opcode: .text, payload: Array(text.utf8), event: name)
    }

    static func handshake(prefix: String = "bird") -> FaultFrame {
        let text = #"{"event":"\#(prefix):connection_established","data":"{\"socket_id\":\"1234.5678\",\"activity_timeout\":120}"}"#
        return FaultFrame(from: .server, opcode: .text, payload: Array(text.utf8),
                          event: "\(prefix):connection_established")
    }

    static func context(_ now: Micros = 0, seed: UInt64 = 1) -> FaultContext {
        FaultContext(now: now, random: SeededGenerator(seed: seed))
    }

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
