import Capture
import Vocabulary
import WebSocket

/// `stall-pings [dir=s2c|c2s|both] [for=DUR]`: swallow the pings of one side (the server's
/// by default: ping control frames, and the events the connection's protocol entry decodes
/// as `.ping`, such as engine.io's `2`), so a client whose liveness rests on the server's
/// pings (engine.io v4, `serverPing` specs) finds the connection dead when its deadline
/// passes. `dir=c2s` swallows a client's pings instead (its pong never comes, as with
/// `stall-pongs`, but the server never sees the ping either).
public struct StallPings: Fault {
    public static let kind = "stall-pings"
    public static let summary = "swallow the server's pings (ping events and ping frames) [dir=s2c|c2s|both] [for=DUR]"
    public static let parameters: Set<String> = ["dir"]

    let senders: Set<Side>
    let duration: Micros?
    var active = false

    public init(_ rule: FaultRule) throws(FaultRuleError) {
        if rule.argument != nil { throw rule.argumentError("stall-pings takes no argument") }
        senders = rule.option("dir") == nil ? [.server] : try rule.directionOption("dir")
        duration = rule.trigger.duration
    }

    /// Looks at the chosen senders' ping frames and text frames (for ping events) only.
    public func needsWholeFrame(from side: Side, opcode: Opcode) -> Bool {
        senders.contains(side) && (opcode.isControl || opcode == .text)
    }

    var whose: String {
        senders.count == 2 ? "every" : senders.contains(.server) ? "the server's" : "the client's"
    }

    public mutating func apply(_ event: FaultEvent, context: inout FaultContext) -> FaultVerdict {
        switch event {
        case .armed:
            active = true
            let span = duration.map { " for \(FaultDuration.format($0))" } ?? ""
            return FaultVerdict(report: "swallowing \(whose) pings\(span)", target: .client)
        case .expired:
            active = false
            return FaultVerdict(report: "pings flow again", target: .client)
        case .frame(let frame):
            guard active, senders.contains(frame.from) else { return .pass }
            let isPing = frame.opcode == .ping || frame.event?.kind == .ping
            return isPing ? FaultVerdict(frame: .drop) : .pass
        case .upgrade, .streamEnded, .timer:
            return .pass
        }
    }
}
