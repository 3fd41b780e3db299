import Capture
import JSON
import Protocols
import Vocabulary
import WebSocket

/// `inject:JSON [to=client|server]`: send a crafted text frame, as the other peer would
/// (for example `inject:{"event":"bird:error","data":{"message":"x","code":4009}}`).
public struct Inject: Fault {
    /// Acts on no frame: a large one may pass through.
    public func needsWholeFrame(from side: Side, opcode: Opcode) -> Bool { false }

    public static let kind = "inject"
    public static let summary = "send a crafted text frame holding JSON [to=client|server]"
    public static let example: String? = #"{"event":"bird:error","data":{"code":4009}}"#
    public static let parameters: Set<String> = ["to"]

    public let payload: [UInt8]
    public let target: Side

    public init(_ rule: FaultRule) throws(FaultRuleError) {
        let text = try rule.requiredArgument("a JSON text")
        do {
            _ = try JSONParser.parse(text)
        } catch {
            throw FaultRuleError("inject needs valid JSON: \(error.reason)", rule: rule.text,
                                 column: rule.argumentColumn + error.offset, length: 1)
        }
        payload = Array(text.utf8)
        target = try rule.sideOption("to", default: .client)
    }

    public mutating func apply(_ event: FaultEvent, context: inout FaultContext) -> FaultVerdict {
        guard event == .armed else { return .pass }
        let name = EventNameScanner.eventName(in: payload).map { " (\($0))" } ?? ""
        return FaultVerdict(effects: [.inject(to: target, payload: payload)],
                            report: "injected a text frame\(name) to \(target.rawValue)", target: target)
    }
}
