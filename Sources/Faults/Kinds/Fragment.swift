/// `fragment:N [event=NAME] [kind=KIND] [channel=NAME] [dir=c2s|s2c]`: send each matching whole data
/// message as N frames, the first with its opcode and the rest continuations (RFC 6455
/// 5.4), so a client's message reassembly is exercised. A message shorter than N bytes
/// gets one byte a frame; one already fragmented is relayed as it came.
public struct Fragment: Fault {
    public static let kind = "fragment"
    public static let summary = "send each message as N continuation frames [event=NAME] [kind=KIND] [channel=NAME] [dir=c2s|s2c]"
    public static let example: String? = "3"
    public static let parameters: Set<String> = MessageMatch.parameters

    public let count: Int
    let match: MessageMatch
    var active = false

    public init(_ rule: FaultRule) throws(FaultRuleError) {
        let text = try rule.requiredArgument("a number of frames")
        guard let count = Int(text), (2...1000).contains(count) else {
            throw rule.argumentError("fragment count must be a whole number from 2 to 1000, not '\(text)'")
        }
        self.count = count
        match = try MessageMatch(rule)
    }

    public mutating func apply(_ event: FaultEvent, context: inout FaultContext) -> FaultVerdict {
        switch event {
        case .armed:
            active = true
            return FaultVerdict(report: "sending \(match.description) as \(count) frames each")
        case .frame(let frame) where active && match.matches(frame) && frame.payload.count > 1:
            return FaultVerdict(frame: .fragment(count))
        default:
            return .pass
        }
    }
}
