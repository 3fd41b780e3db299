import Capture
import Vocabulary

/// `bandwidth:RATE [dir=c2s|s2c]`: each direction carries at most RATE (`64KB/s`, KB =
/// 1000 bytes as in toxiproxy's `rate`). A frame leaves when the frames before it would
/// have finished crossing a link of that rate: its payload bytes over RATE after the later
/// of its arrival and the previous frame's departure. Order is kept; bursts queue up.
public struct Bandwidth: Fault {
    public static let kind = "bandwidth"
    public static let summary = "limit each direction to RATE, as in 64KB/s or 1MB/s [dir=c2s|s2c]"
    public static let example: String? = "64KB/s"
    public static let parameters: Set<String> = ["dir"]

    /// Bytes per second.
    public let rate: Double
    let senders: Set<Side>
    /// When each sender's link is free again.
    var busyUntil: [Side: Micros] = [:]
    var active = false

    public init(_ rule: FaultRule) throws(FaultRuleError) {
        let text = try rule.requiredArgument("a rate")
        guard let rate = ByteRate.rate(text) else {
            throw rule.argumentError("bad rate '\(text)': expected a number, a unit and /s, as in 64KB/s, 1MB/s or 512B/s")
        }
        guard rate >= 1, rate <= 100_000_000_000 else {
            throw rule.argumentError("rate \(text) outside 1B/s-100GB/s")
        }
        self.rate = rate
        senders = try rule.directionOption("dir")
    }

    public mutating func apply(_ event: FaultEvent, context: inout FaultContext) -> FaultVerdict {
        switch event {
        case .armed:
            active = true
            return FaultVerdict(report: "limiting bandwidth to \(ByteRate.format(perSecond: rate))"
                                + (senders.count == 1 ? " from the \(senders.first!.rawValue)" : " each way"))
        case .frame(let frame) where active && senders.contains(frame.from):
            let start = max(context.now, busyUntil[frame.from] ?? context.now)
            // At most 64 MiB over at least 1 B/s: fits easily, but kept checked and clamped.
            let transfer = (Double(frame.payload.count) * 1_000_000 / rate).rounded(.up)
            let span = transfer < Double(Micros.max / 4) ? Micros(transfer) : Micros.max / 4
            let done = start.addingClamped(span)
            busyUntil[frame.from] = done
            return done > context.now ? FaultVerdict(frame: .delay(done - context.now)) : .pass
        default:
            return .pass
        }
    }
}
