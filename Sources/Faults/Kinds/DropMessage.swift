/// `drop-message [event=NAME] [kind=KIND] [channel=NAME] [dir=c2s|s2c]`: swallow matching messages;
/// everything else flows (`drop` instead ends the whole connection).
public struct DropMessage: Fault {
    public static let kind = "drop-message"
    public static let summary = "swallow matching messages [event=NAME] [kind=KIND] [channel=NAME] [dir=c2s|s2c]"
    public static let parameters: Set<String> = MessageMatch.parameters

    let match: MessageMatch
    var active = false

    public init(_ rule: FaultRule) throws(FaultRuleError) {
        if rule.argument != nil { throw rule.argumentError("drop-message takes no argument (use event=, kind=, channel=, dir=)") }
        match = try MessageMatch(rule)
    }

    public mutating func apply(_ event: FaultEvent, context: inout FaultContext) -> FaultVerdict {
        switch event {
        case .armed:
            active = true
            return FaultVerdict(report: "dropping \(match.description)")
        case .frame(let frame) where active && match.matches(frame):
            return FaultVerdict(frame: .drop)
        default:
            return .pass
        }
    }
}
