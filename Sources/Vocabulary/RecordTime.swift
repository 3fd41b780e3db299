/// Microseconds since the capture's start (`CaptureHeader.startedAt`). Integer so that
/// times never lose precision, whatever the capture's length.
public typealias Micros = Int64

/// Checked time arithmetic for values that come from files and the network. A capture's
/// `t`, a pcap's timestamp or a handshake's `activity_timeout` is whatever the sender
/// wrote; `Int64(_:)`, `*` and `+` on such a value trap on overflow, and a trap ends the
/// whole run (or the proxy with all its connections). These helpers never trap.
public enum RecordTime {
    /// Record times a reader accepts: strictly within ±2^62 µs (about 146,000 years).
    /// Within that range the difference of two times, and a time plus any duration the
    /// specs and options allow (below 2^62 µs too), fit in an `Int64`, so the analyzer's
    /// subtractions and deadline additions cannot overflow.
    public static let limit: Micros = 1 << 62

    public static func isValid(_ t: Micros) -> Bool { t > -limit && t < limit }

    /// Seconds (a JSON number) as microseconds, or nil when the value is NaN, infinite or
    /// does not fit in an `Int64` once scaled.
    public static func micros(seconds: Double) -> Micros? {
        guard seconds.isFinite else { return nil }
        return Int64(exactly: (seconds * 1_000_000).rounded())
    }
}

extension Int64 {
    /// `self + other`, pinned to `Int64.max` or `Int64.min` instead of trapping. For
    /// deadlines: a deadline past the end of time is one that never comes.
    public func addingSaturated(_ other: Int64) -> Int64 {
        let (sum, overflow) = addingReportingOverflow(other)
        return overflow ? (other > 0 ? .max : .min) : sum
    }

    /// `self - other`, pinned to `Int64.max` or `Int64.min` instead of trapping.
    public func subtractingSaturated(_ other: Int64) -> Int64 {
        let (difference, overflow) = subtractingReportingOverflow(other)
        return overflow ? (other < 0 ? .max : .min) : difference
    }
}
