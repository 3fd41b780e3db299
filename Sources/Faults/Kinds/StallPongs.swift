import Capture
import Vocabulary
import WebSocket

/// `stall-pongs [for=DUR]`: swallow the server's pongs to the client (pong control frames,
/// and the events the connection's protocol entry decodes as `.pong`, such as `P:pong`
/// under any prefix), so the client's stale-connection check must fire.
public struct StallPongs: Fault {
    /// Looks at the server's pong frames and text frames (for pong events) only.
    public func needsWholeFrame(from side: Side, opcode: Opcode) -> Bool { side == .server && (opcode.isControl || opcode == .text) }

    public static let kind = "stall-pongs"
    public static let summary = "swallow the server's pongs (P:pong events and pong frames) [for=DUR]"

    let duration: Micros?
    var active = false

    public init(_ rule: FaultRule) throws(FaultRuleError) {
        if rule.argument != nil { throw rule.argumentError("stall-pongs takes no argument") }
        duration = rule.trigger.duration
    }

    public mutating func apply(_ event: FaultEvent, context: inout FaultContext) -> FaultVerdict {
        switch event {
        case .armed:
            active = true
            let span = duration.map { " for \(FaultDuration.format($0))" } ?? ""
            return FaultVerdict(report: "swallowing the server's pongs\(span)", target: .client)
        case .expired:
            active = false
            return FaultVerdict(report: "pongs flow again", target: .client)
        case .frame(let frame):
            guard active, frame.from == .server else { return .pass }
            let isPong = frame.opcode == .pong || frame.event?.kind == .pong
            return isPong ? FaultVerdict(frame: .drop) : .pass
        case .upgrade, .streamEnded, .timer:
            return .pass
        }
    }
}
