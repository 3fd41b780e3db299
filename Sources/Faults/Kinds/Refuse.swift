import Capture
import Vocabulary
import WebSocket

/// `refuse:CODE [reason=TEXT]`: accept the upgrade without contacting the upstream, then
/// close with CODE at once: a server refusing the connection (4001 no such app, 4004 over quota).
public struct Refuse: Fault {
    /// Acts on no frame: a large one may pass through.
    public func needsWholeFrame(from side: Side, opcode: Opcode) -> Bool { false }

    public static let kind = "refuse"
    public static let summary = "accept the upgrade, then close at once with CODE (no upstream) [reason=TEXT]"
    public static let example: String? = "4001"
    public static let parameters: Set<String> = ["reason"]
    public static let actsAtUpgrade = true

    public let code: UInt16
    public let reason: String

    public init(_ rule: FaultRule) throws(FaultRuleError) {
        code = try CloseCodeRules.parse(try rule.requiredArgument("a close code"), rule: rule)
        reason = try CloseCodeRules.reason(rule)
    }

    public mutating func apply(_ event: FaultEvent, context: inout FaultContext) -> FaultVerdict {
        guard event == .upgrade else { return .pass }
        return FaultVerdict(effects: [.refuseUpgrade(code: code, reason: reason)],
                            report: "refused the connection: upgrade accepted, then \(CloseCodeRules.describe(code: code, reason: reason))",
                            target: .client)
    }
}
