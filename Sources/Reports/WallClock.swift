import Capture
import Vocabulary

/// Absolute times for reports: the capture header's wall-clock start (microseconds since
/// 1970, UTC) plus a record's relative time, written as ISO 8601 in UTC. Pure arithmetic
/// (days to civil date, H. Hinnant's algorithm), so no time zone database or Foundation is
/// involved and the same capture always prints the same text. Nil when the sum overflows
/// or falls outside years 1970-9999 (a header from a broken or hostile file).
public enum WallClock {
    /// "2026-11-29T22:30:26.983Z" (milliseconds).
    public static func iso(_ startedAt: Int64, plus t: Micros) -> String? {
        text(startedAt, plus: t, 0..<24)
    }

    /// "2026-11-29T22:30:26": JUnit's `timestamp` (no zone, whole seconds; the time is UTC).
    public static func timestamp(_ startedAt: Int64, plus t: Micros) -> String? {
        text(startedAt, plus: t, 0..<19)
    }

    /// "2026-11-29": the capture's date.
    public static func date(_ startedAt: Int64) -> String? {
        text(startedAt, plus: 0, 0..<10)
    }

    /// "22:30:26.983": the time of day alone, for dense views.
    public static func timeOfDay(_ startedAt: Int64, plus t: Micros) -> String? {
        text(startedAt, plus: t, 11..<23)
    }

    /// The characters `range` of "YYYY-MM-DDTHH:MM:SS.mmmZ" for the time, written digit by
    /// digit into one buffer: a report writes one for every transition and finding, and
    /// the interpolation of nine padded numbers it replaced was 2% of the instructions of
    /// a 150 MB capture's analysis (callgrind).
    private static func text(_ startedAt: Int64, plus t: Micros, _ range: Range<Int>) -> String? {
        let (sum, overflow) = startedAt.addingReportingOverflow(t)
        // 253402300800 s is 10000-01-01T00:00:00Z.
        guard !overflow, sum >= 0, sum < 253_402_300_800_000_000 else { return nil }
        let ms = (sum / 1000) % 1000
        let secs = sum / 1_000_000
        let days = secs / 86_400
        let rem = secs % 86_400
        // Civil from days since 1970-01-01.
        let z = days + 719_468
        let era = z / 146_097
        let doe = z - era * 146_097
        let yoe = (doe - doe / 1460 + doe / 36_524 - doe / 146_096) / 365
        let doy = doe - (365 * yoe + yoe / 4 - yoe / 100)
        let mp = (5 * doy + 2) / 153
        let day = doy - (153 * mp + 2) / 5 + 1
        let month = mp < 10 ? mp + 3 : mp - 9
        let year = yoe + era * 400 + (month <= 2 ? 1 : 0)
        return withUnsafeTemporaryAllocation(of: UInt8.self, capacity: 24) { out in
            // Each field right-aligned in its width, zero-padded (every value fits: the
            // year is 1970-9999 by the guard above).
            func put(_ value: Int64, at start: Int, width: Int) {
                var v = value
                for i in stride(from: start + width - 1, through: start, by: -1) {
                    out[i] = 0x30 + UInt8(truncatingIfNeeded: v % 10)
                    v /= 10
                }
            }
            put(year, at: 0, width: 4); out[4] = 0x2D
            put(month, at: 5, width: 2); out[7] = 0x2D
            put(day, at: 8, width: 2); out[10] = 0x54
            put(rem / 3600, at: 11, width: 2); out[13] = 0x3A
            put(rem / 60 % 60, at: 14, width: 2); out[16] = 0x3A
            put(rem % 60, at: 17, width: 2); out[19] = 0x2E
            put(ms, at: 20, width: 3); out[23] = 0x5A
            return String(decoding: UnsafeBufferPointer(rebasing: out[range]), as: UTF8.self)
        }
    }
}
