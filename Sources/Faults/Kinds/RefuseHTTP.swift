import Capture
import Vocabulary
import WebSocket

/// `refuse-http:STATUS`: answer the upgrade request with an HTTP error status (400-599)
/// without contacting the upstream.
public struct RefuseHTTP: Fault {
    /// Acts on no frame: a large one may pass through.
    public func needsWholeFrame(from side: Side, opcode: Opcode) -> Bool { false }

    public static let kind = "refuse-http"
    public static let summary = "answer the upgrade with HTTP STATUS (400-599), no upstream"
    public static let example: String? = "503"
    public static let actsAtUpgrade = true

    public let status: Int

    public init(_ rule: FaultRule) throws(FaultRuleError) {
        let text = try rule.requiredArgument("an HTTP status")
        guard let status = Int(text), (400...599).contains(status) else {
            throw rule.argumentError("HTTP status \(text) outside 400-599")
        }
        self.status = status
    }

    public mutating func apply(_ event: FaultEvent, context: inout FaultContext) -> FaultVerdict {
        guard event == .upgrade else { return .pass }
        return FaultVerdict(effects: [.refuseHTTP(status: status)],
                            report: "refused the upgrade with HTTP \(status)", target: .client)
    }
}
