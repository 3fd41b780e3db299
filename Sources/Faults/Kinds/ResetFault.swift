import Capture
import Vocabulary
import WebSocket

/// `reset`: end both TCP connections with RST.
public struct ResetFault: Fault {
    /// Acts on no frame: a large one may pass through.
    public func needsWholeFrame(from side: Side, opcode: Opcode) -> Bool { false }

    public static let kind = "reset"
    public static let summary = "end both TCP connections with RST"

    public init(_ rule: FaultRule) throws(FaultRuleError) {
        if rule.argument != nil { throw rule.argumentError("reset takes no argument") }
    }

    public mutating func apply(_ event: FaultEvent, context: inout FaultContext) -> FaultVerdict {
        guard event == .armed else { return .pass }
        return FaultVerdict(effects: [.reset], report: "reset both connections")
    }
}
