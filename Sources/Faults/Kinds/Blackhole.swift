import Capture
import Vocabulary

/// `blackhole [dir=c2s|s2c] [for=DUR]`: keep both sockets open and forward nothing (the
/// frames are read and dropped, and a FIN or RST is not passed on either): the network
/// path that died silently. `for=` (every kind's) ends it.
public struct Blackhole: Fault {
    public static let kind = "blackhole"
    public static let summary = "forward nothing, sockets stay open [dir=c2s|s2c] [for=DUR]"
    public static let parameters: Set<String> = ["dir"]

    let senders: Set<Side>
    let duration: Micros?
    var active = false

    public init(_ rule: FaultRule) throws(FaultRuleError) {
        if rule.argument != nil { throw rule.argumentError("blackhole takes no argument") }
        senders = try rule.directionOption("dir")
        duration = rule.trigger.duration
    }

    var directionName: String {
        senders.count == 2 ? "both ways" : senders.contains(.client) ? "client to server" : "server to client"
    }

    public mutating func apply(_ event: FaultEvent, context: inout FaultContext) -> FaultVerdict {
        switch event {
        case .armed:
            active = true
            let span = duration.map { " for \(FaultDuration.format($0))" } ?? ""
            let target: Side? = senders.count == 2 ? nil : senders.first?.other
            return FaultVerdict(report: "blackholing \(directionName)\(span)", target: target)
        case .expired:
            active = false
            return FaultVerdict(report: "blackhole over, forwarding \(directionName) again")
        case .frame(let frame):
            return active && senders.contains(frame.from) ? FaultVerdict(frame: .drop) : .pass
        case .streamEnded(let side):
            return active && senders.contains(side) ? FaultVerdict(frame: .drop) : .pass
        case .upgrade, .timer:
            return .pass
        }
    }
}
