import WebSocket
import Capture
import Vocabulary

/// `close:CODE [reason=TEXT] [to=client|server]`: send a close frame with that code, as the
/// other peer would, and close the far side's socket (a server terminating a member).
public struct CloseFault: Fault {
    /// Acts on no frame: a large one may pass through.
    public func needsWholeFrame(from side: Side, opcode: Opcode) -> Bool { false }

    public static let kind = "close"
    public static let summary = "send a close frame with CODE to the client (to=server: upstream) [reason=TEXT]"
    public static let example: String? = "4009"
    public static let parameters: Set<String> = ["reason", "to"]

    public let code: UInt16
    public let reason: String
    public let target: Side

    public init(_ rule: FaultRule) throws(FaultRuleError) {
        code = try CloseCodeRules.parse(try rule.requiredArgument("a close code"), rule: rule)
        reason = try CloseCodeRules.reason(rule)
        target = try rule.sideOption("to", default: .client)
    }

    public mutating func apply(_ event: FaultEvent, context: inout FaultContext) -> FaultVerdict {
        guard event == .armed else { return .pass }
        return FaultVerdict(effects: [.close(to: target, code: code, reason: reason)],
                            report: "sent \(CloseCodeRules.describe(code: code, reason: reason)) to \(target.rawValue), closed \(target.other.rawValue)",
                            target: target)
    }
}
