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
        guard let (date, ms) = parts(startedAt, plus: t) else { return nil }
        return "\(date).\(pad(ms, 3))Z"
    }

    /// "2026-11-29T22:30:26": JUnit's `timestamp` (no zone, whole seconds; the time is UTC).
    public static func timestamp(_ startedAt: Int64, plus t: Micros) -> String? {
        parts(startedAt, plus: t)?.0
    }

    /// "2026-11-29": the capture's date.
    public static func date(_ startedAt: Int64) -> String? {
        parts(startedAt, plus: 0).map { String($0.0.prefix(10)) }
    }

    /// "22:30:26.983": the time of day alone, for dense views.
    public static func timeOfDay(_ startedAt: Int64, plus t: Micros) -> String? {
        guard let (date, ms) = parts(startedAt, plus: t) else { return nil }
        return "\(date.suffix(8)).\(pad(ms, 3))"
    }

    private static func parts(_ startedAt: Int64, plus t: Micros) -> (String, Int64)? {
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
        let text = "\(pad(year, 4))-\(pad(month, 2))-\(pad(day, 2))T\(pad(rem / 3600, 2)):\(pad(rem / 60 % 60, 2)):\(pad(rem % 60, 2))"
        return (text, ms)
    }

    private static func pad(_ value: Int64, _ width: Int) -> String {
        let text = String(value)
        return text.count >= width ? text : String(repeating: "0", count: width - text.count) + text
    }
}
