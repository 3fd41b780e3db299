import Capture
import Vocabulary

/// `timeout:DUR [dir=c2s|s2c]`: stop relaying (frames and FINs are swallowed, as by a
/// blackhole), then after DUR end both connections with FIN (toxiproxy's timeout). With
/// `timeout:0s` the connections are never closed: nothing flows until the rule is removed.
public struct Timeout: Fault {
    public static let kind = "timeout"
    public static let summary = "forward nothing, then end both connections (FIN) after DUR; 0s never ends [dir=c2s|s2c]"
    public static let example: String? = "5s"
    public static let parameters: Set<String> = ["dir"]

    public let timeout: Micros
    let senders: Set<Side>
    var closeAt: Micros?
    var active = false

    public init(_ rule: FaultRule) throws(FaultRuleError) {
        timeout = try rule.durationArgument()
        senders = try rule.directionOption("dir")
    }

    public mutating func apply(_ event: FaultEvent, context: inout FaultContext) -> FaultVerdict {
        switch event {
        case .armed:
            active = true
            guard timeout > 0 else { return FaultVerdict(report: "forwarding nothing, with no timeout") }
            closeAt = context.now.addingClamped(timeout)
            return FaultVerdict(report: "forwarding nothing; closing in \(FaultDuration.format(timeout))", wakeup: closeAt)
        case .timer:
            guard active, let closeAt, context.now >= closeAt else { return .pass }
            active = false
            return FaultVerdict(effects: [.drop], report: "timed out after \(FaultDuration.format(timeout)): ended both connections with FIN")
        case .frame(let frame):
            return active && senders.contains(frame.from) ? FaultVerdict(frame: .drop) : .pass
        case .streamEnded(let side):
            return active && senders.contains(side) ? FaultVerdict(frame: .drop) : .pass
        case .expired:
            active = false
            return .pass
        case .upgrade:
            return .pass
        }
    }
}
