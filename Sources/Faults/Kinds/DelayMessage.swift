import Capture
import Vocabulary

/// `delay-message:DUR [event=NAME] [kind=KIND] [channel=NAME] [dir=c2s|s2c]`: hold matching messages
/// for DUR. Later frames in the same direction wait behind them (one TCP stream keeps its
/// order); use `reorder` to let them overtake.
public struct DelayMessage: Fault {
    public static let kind = "delay-message"
    public static let summary = "hold matching messages for DUR (order kept) [event=NAME] [kind=KIND] [channel=NAME] [dir=c2s|s2c]"
    public static let example: String? = "2s"
    public static let parameters: Set<String> = MessageMatch.parameters

    public let delay: Micros
    let match: MessageMatch
    var active = false

    public init(_ rule: FaultRule) throws(FaultRuleError) {
        delay = try rule.durationArgument()
        match = try MessageMatch(rule)
    }

    public mutating func apply(_ event: FaultEvent, context: inout FaultContext) -> FaultVerdict {
        switch event {
        case .armed:
            active = true
            return FaultVerdict(report: "delaying \(match.description) by \(FaultDuration.format(delay))")
        case .frame(let frame) where active && match.matches(frame):
            return FaultVerdict(frame: .delay(delay))
        default:
            return .pass
        }
    }
}
