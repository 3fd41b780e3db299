/// `duplicate[:N] [event=NAME] [kind=KIND] [channel=NAME] [dir=c2s|s2c]`: relay each matching message,
/// then send it N more times (default once), as its sender would: the double delivery a
/// client must tolerate. The copies go uncompressed.
public struct Duplicate: Fault {
    public static let kind = "duplicate"
    public static let summary = "send matching messages N more times (default 1) [event=NAME] [kind=KIND] [channel=NAME] [dir=c2s|s2c]"
    public static let parameters: Set<String> = MessageMatch.parameters

    public let copies: Int
    let match: MessageMatch
    var active = false

    public init(_ rule: FaultRule) throws(FaultRuleError) {
        if let text = rule.argument {
            guard let n = Int(text), (1...100).contains(n) else {
                throw rule.argumentError("duplicate count must be a whole number from 1 to 100, not '\(text)'")
            }
            copies = n
        } else {
            copies = 1
        }
        match = try MessageMatch(rule)
    }

    public mutating func apply(_ event: FaultEvent, context: inout FaultContext) -> FaultVerdict {
        switch event {
        case .armed:
            active = true
            return FaultVerdict(report: "duplicating \(match.description)" + (copies > 1 ? " (\(copies) copies)" : ""))
        case .frame(let frame) where active && match.matches(frame):
            let copy = FaultEffect.resend(to: frame.from.other, opcode: frame.opcode, payload: frame.payload)
            return FaultVerdict(effects: Array(repeating: copy, count: copies))
        default:
            return .pass
        }
    }
}
