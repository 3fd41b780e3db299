import Capture
import Vocabulary

/// `limit-data:BYTES [dir=c2s|s2c]`: relay frames until their payloads add up to BYTES
/// (`4096`, `64KB`), then end both connections with FIN, no close frame (toxiproxy's
/// limit_data). A frame that would pass the limit is not relayed; one that reaches it
/// exactly is, and the connections end right after it.
public struct LimitData: Fault {
    public static let kind = "limit-data"
    public static let summary = "end both connections (FIN) once BYTES of payload were relayed [dir=c2s|s2c]"
    public static let example: String? = "64KB"
    public static let parameters: Set<String> = ["dir"]

    public let limit: Int
    let senders: Set<Side>
    var relayed = 0
    var active = false

    public init(_ rule: FaultRule) throws(FaultRuleError) {
        let text = try rule.requiredArgument("a number of bytes")
        guard let bytes = ByteRate.size(text), bytes >= 0, bytes <= 1e15 else {
            throw rule.argumentError("bad byte count '\(text)': expected a whole number, optionally with KB, MB, KiB or MiB")
        }
        limit = Int(bytes)
        senders = try rule.directionOption("dir")
    }

    public mutating func apply(_ event: FaultEvent, context: inout FaultContext) -> FaultVerdict {
        switch event {
        case .armed:
            active = true
            guard limit > relayed else { return end(dropping: false) }
            return FaultVerdict(report: "limiting the connection to \(limit) bytes of payload")
        case .frame(let frame) where active && senders.contains(frame.from):
            let (total, overflow) = relayed.addingReportingOverflow(frame.payload.count)
            if overflow || total > limit { return end(dropping: true) }
            relayed = total
            return total == limit ? end(dropping: false) : .pass
        default:
            return .pass
        }
    }

    mutating func end(dropping: Bool) -> FaultVerdict {
        active = false
        return FaultVerdict(frame: dropping ? .drop : .pass, effects: [.drop],
                            report: "limit of \(limit) bytes reached after \(relayed): ended both connections with FIN")
    }
}
