/// Microseconds on the caller's clock. The machines never read a clock: every event comes
/// with `now`, so tests drive them with a fake clock at full speed. (Not `Capture.Micros`,
/// to keep Sim free of the capture module; it is the same representation, an Int64.)
public typealias SimMicros = Int64

public enum SimDuration {
    public static let second: SimMicros = 1_000_000
    public static let millisecond: SimMicros = 1_000

    /// The longest duration the simulator takes, from a flag or from a peer (about 31
    /// years): longer values are clamped to it, so no timer arithmetic can overflow.
    public static let maxSeconds: Double = 1e9

    /// Seconds as microseconds, clamped to ±`maxSeconds` (NaN counts as 0). Total, since
    /// the value may come from the peer: a handshake's `activity_timeout` of 1e300 once
    /// trapped here and ended `sim client`.
    public static func seconds(_ value: Double) -> SimMicros {
        guard !value.isNaN else { return 0 }
        let bounded = min(max(value, -maxSeconds), maxSeconds)
        return SimMicros((bounded * 1_000_000).rounded())
    }

    /// "0.734 s": what the state log and the tests print.
    public static func format(_ micros: SimMicros) -> String {
        let millis = (micros + 500) / 1_000
        let whole = millis / 1_000
        let fraction = String(millis % 1_000)
        return "\(whole).\(String(repeating: "0", count: 3 - fraction.count))\(fraction) s"
    }

    /// Parses "250ms", "2s", "1.5s", "3m", "100us" or a bare number of seconds.
    public static func parse(_ text: String) -> SimMicros? {
        let units: [(String, Double)] = [("us", 1), ("ms", 1_000), ("s", 1_000_000), ("m", 60_000_000), ("h", 3_600_000_000)]
        for (suffix, scale) in units where text.hasSuffix(suffix) {
            let number = text.dropLast(suffix.count)
            // "ms" also ends in "s": only accept when what is left is a number.
            if let value = Double(number), value >= 0, value * scale <= maxSeconds * 1_000_000 {
                return SimMicros((value * scale).rounded())
            }
        }
        if let value = Double(text), value >= 0, value <= maxSeconds { return seconds(value) }
        return nil
    }
}
