import Capture
import Vocabulary

/// `slicer [size=BYTES] [variation=BYTES] [delay=DUR] [dir=c2s|s2c]`: write each frame in
/// small pieces (SIZE +/- VARIATION bytes, drawn from the seeded generator), DELAY apart,
/// one TCP write each, so a peer's frame reassembly is exercised (toxiproxy's slicer;
/// defaults 16 +/- 8 bytes, 1ms). A frame is cut into at most 1024 pieces; the last
/// takes what is left.
public struct Slicer: Fault {
    public static let kind = "slicer"
    public static let summary = "write frames in small pieces, [size=16] [variation=8] bytes, [delay=1ms] apart [dir=c2s|s2c]"
    public static let parameters: Set<String> = ["size", "variation", "delay", "dir"]
    static let maxPieces = 1024

    public let size: Int
    public let variation: Int
    public let gap: Micros
    let senders: Set<Side>
    var active = false

    public init(_ rule: FaultRule) throws(FaultRuleError) {
        if rule.argument != nil { throw rule.argumentError("slicer takes no argument (use size=, variation=, delay=)") }
        size = try Self.count(rule, "size", default: 16, range: 1...1_048_576)
        variation = try Self.count(rule, "variation", default: rule.option("size") == nil ? 8 : 0, range: 0...1_048_576)
        if variation >= size, let option = rule.option("variation") {
            throw rule.error("variation must be smaller than size (\(size))", at: option)
        }
        gap = try rule.durationOption("delay") ?? 1_000
        senders = try rule.directionOption("dir")
    }

    static func count(_ rule: FaultRule, _ key: String, default value: Int, range: ClosedRange<Int>) throws(FaultRuleError) -> Int {
        guard let option = rule.option(key) else { return value }
        guard let n = ByteRate.size(option.value), n >= Double(range.lowerBound), n <= Double(range.upperBound) else {
            throw rule.error("\(key) must be a number of bytes from \(range.lowerBound) to \(range.upperBound), not '\(option.value)'", at: option)
        }
        return Int(n)
    }

    /// Bytes the frame takes on the wire (header, mask, payload), for cutting it up.
    static func wireLength(_ frame: FaultFrame) -> Int {
        let n = frame.payload.count
        return 2 + (n > 65_535 ? 8 : n > 125 ? 2 : 0) + (frame.from == .client ? 4 : 0) + n
    }

    public mutating func apply(_ event: FaultEvent, context: inout FaultContext) -> FaultVerdict {
        switch event {
        case .armed:
            active = true
            let spread = variation > 0 ? " +/- \(variation)" : ""
            return FaultVerdict(report: "slicing frames into \(size)\(spread)-byte writes \(FaultDuration.format(gap)) apart")
        case .frame(let frame) where active && senders.contains(frame.from):
            var left = Self.wireLength(frame)
            var pieces: [Int] = []
            while left > 0, pieces.count < Self.maxPieces {
                let drawn = variation == 0 ? size : size + Int((context.random.unit() * 2 - 1) * Double(variation))
                let piece = min(left, max(1, drawn))
                pieces.append(piece)
                left -= piece
            }
            return pieces.count > 1 ? FaultVerdict(frame: .slice(pieces: pieces, gap: gap)) : .pass
        default:
            return .pass
        }
    }
}
