import Capture
import Vocabulary

/// `latency:DUR [jitter=DUR] [dir=c2s|s2c]`: delay frames by DUR plus or minus a uniform
/// jitter drawn from the seeded generator. The relay keeps their order per direction.
public struct Latency: Fault {
    public static let kind = "latency"
    public static let summary = "delay frames by DUR [jitter=DUR] [dir=c2s|s2c], order kept"
    public static let example: String? = "200ms"
    public static let parameters: Set<String> = ["jitter", "dir"]

    public let delay: Micros
    public let jitter: Micros
    let senders: Set<Side>
    var active = false

    public init(_ rule: FaultRule) throws(FaultRuleError) {
        delay = try rule.durationArgument()
        jitter = try rule.durationOption("jitter") ?? 0
        senders = try rule.directionOption("dir")
    }

    public mutating func apply(_ event: FaultEvent, context: inout FaultContext) -> FaultVerdict {
        switch event {
        case .armed:
            active = true
            let spread = jitter > 0 ? " +/- \(FaultDuration.format(jitter))" : ""
            return FaultVerdict(report: "delaying frames by \(FaultDuration.format(delay))\(spread)")
        case .frame(let frame) where active && senders.contains(frame.from):
            var amount = delay
            if jitter > 0 {
                amount += Micros((context.random.unit() * 2 - 1) * Double(jitter))
            }
            return FaultVerdict(frame: .delay(max(0, amount)))
        default:
            return .pass
        }
    }
}
