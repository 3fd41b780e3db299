import Capture
import Vocabulary

/// Rate-limits a recurring problem's reports (accept failing at the file-descriptor limit
/// can happen thousands of times a second): the first occurrence is reported at once, then
/// at most one report per `interval`, carrying how many occurrences it stands for.
public struct ProblemThrottle: Sendable {
    public let interval: Micros
    private var lastReport: Micros?
    private var unreported = 0

    public init(interval: Micros = 10_000_000) {
        self.interval = interval
    }

    /// One more occurrence at `now`: the number of occurrences to report now (this one and
    /// those held back since the last report), or nil to stay quiet.
    public mutating func occurred(now: Micros) -> Int? {
        unreported += 1
        if let lastReport {
            let (due, overflow) = lastReport.addingReportingOverflow(interval)
            guard !overflow, now >= due else { return nil }
        }
        lastReport = now
        defer { unreported = 0 }
        return unreported
    }
}
