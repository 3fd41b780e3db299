import WebSocket
import Capture
import Vocabulary

/// `slow-close:DUR [dir=c2s|s2c]`: hold each close frame, and each FIN, for DUR before
/// passing it on (toxiproxy's slow_close): a peer that is slow to finish the closing
/// handshake. Frames behind a held close wait with it, as on one TCP stream.
public struct SlowClose: Fault {
    /// Acts on control frames only, which are always small.
    public func needsWholeFrame(from side: Side, opcode: Opcode) -> Bool { opcode == .close }

    public static let kind = "slow-close"
    public static let summary = "hold close frames and FINs for DUR before passing them on [dir=c2s|s2c]"
    public static let example: String? = "5s"
    public static let parameters: Set<String> = ["dir"]

    public let delay: Micros
    let senders: Set<Side>
    var active = false

    public init(_ rule: FaultRule) throws(FaultRuleError) {
        delay = try rule.durationArgument()
        senders = try rule.directionOption("dir")
    }

    public mutating func apply(_ event: FaultEvent, context: inout FaultContext) -> FaultVerdict {
        switch event {
        case .armed:
            active = true
            return FaultVerdict(report: "holding close frames and FINs for \(FaultDuration.format(delay))")
        case .frame(let frame) where active && frame.opcode == .close && senders.contains(frame.from):
            return FaultVerdict(frame: .delay(delay), report: "held the \(frame.from.rawValue)'s close frame for \(FaultDuration.format(delay))",
                                target: frame.from.other)
        case .streamEnded(let side) where active && senders.contains(side):
            return FaultVerdict(frame: .delay(delay), report: "held the \(side.rawValue)'s FIN for \(FaultDuration.format(delay))",
                                target: side.other)
        default:
            return .pass
        }
    }
}
