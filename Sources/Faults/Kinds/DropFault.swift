import Capture
import Vocabulary
import WebSocket

/// `drop`: end both TCP connections with FIN and no close frame.
public struct DropFault: Fault {
    /// Acts on no frame: a large one may pass through.
    public func needsWholeFrame(from side: Side, opcode: Opcode) -> Bool { false }

    public static let kind = "drop"
    public static let summary = "end both TCP connections with FIN, no close frame"

    public init(_ rule: FaultRule) throws(FaultRuleError) {
        if rule.argument != nil { throw rule.argumentError("drop takes no argument") }
    }

    public mutating func apply(_ event: FaultEvent, context: inout FaultContext) -> FaultVerdict {
        guard event == .armed else { return .pass }
        return FaultVerdict(effects: [.drop], report: "ended both connections with FIN, no close frame")
    }
}
