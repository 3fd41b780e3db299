import Capture
import Vocabulary

/// How recorded gaps become live delays: divided by the speed (`max`: no waiting at all),
/// capped at `maxGap` first, and how long to wait past the recorded time for a frame the
/// live peer should send before calling it missing.
public struct ReplayTiming: Sendable, Hashable {
    /// 1 = recorded timing, 2 = twice as fast; nil = as fast as possible (`--speed max`).
    public var speed: Double?
    /// Longest recorded gap kept as it is (`--max-gap 1s`); nil keeps every gap.
    public var maxGap: Micros?
    /// Grace past the expected moment before a recorded peer frame counts as missing.
    public var patience: Micros

    public init(speed: Double? = 1, maxGap: Micros? = nil, patience: Micros = 5_000_000) {
        self.speed = speed
        self.maxGap = maxGap
        self.patience = patience
    }

    /// The live delay for a recorded gap.
    public func delay(_ recordedGap: Micros) -> Micros {
        guard let speed else { return 0 }
        var gap = max(0, recordedGap)
        if let maxGap { gap = min(gap, maxGap) }
        // A slow speed on a long recorded gap can exceed 64 bits: the longest wait there is.
        let scaled = (Double(gap) / speed).rounded()
        guard scaled.isFinite, scaled < Double(RecordTime.limit) else { return RecordTime.limit }
        return Micros(max(scaled, 0))
    }

    /// How long to wait for a frame the live peer should send `recordedGap` after our
    /// last step: the recorded gap unscaled (`--speed` makes our side faster, not the
    /// peer's clock: a client's idle ping comes after its own timeout whatever our speed),
    /// but capped at `maxGap` like every other wait, and never less than our own delay.
    public func peerWait(_ recordedGap: Micros) -> Micros {
        var gap = min(max(0, recordedGap), RecordTime.limit)
        if let maxGap { gap = min(gap, maxGap) }
        return max(delay(recordedGap), gap)
    }

    /// Speeds a replay takes (`--speed`): beyond them a recorded second becomes more than
    /// a day and a half or less than a tenth of a millisecond, and a replay never ends or
    /// is `max` in all but name.
    public static let speeds: ClosedRange<Double> = 0.01...10_000

    /// `--speed`'s value: a factor within `speeds`, or "max" (nil: no waiting).
    public static func speed(parsing text: String) -> Result<Double?, ReplayInputError> {
        if text == "max" { return .success(nil) }
        guard let factor = Double(text), speeds.contains(factor) else {
            return .failure(ReplayInputError("expected a number from 0.01 to 10000, or 'max'"))
        }
        return .success(factor)
    }

    /// A duration as people write it on the command line: "10s", "1.5s", "250ms".
    public static func describe(_ micros: Micros) -> String {
        let millis = max(0, micros) / 1000
        if millis % 1000 == 0 { return "\(millis / 1000)s" }
        if millis < 1000 { return "\(millis)ms" }
        var text = Deviation.seconds(micros)
        while text.hasSuffix("0") { text.removeLast() }
        return text + "s"
    }
}
