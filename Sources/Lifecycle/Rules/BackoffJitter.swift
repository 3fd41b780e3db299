import Capture
import Foundation
import Vocabulary

/// `backoff.jitter`: with 8 or more jittered delays, each placed in its window (for full
/// jitter, divided by its bound) should look uniform on [0, 1]. All equal, or a
/// Kolmogorov-Smirnov test rejecting at p < 0.01, means the client does not spread its
/// delays as its policy says. Judged once, at the end of the input. Delays after a close
/// code's own window are left out (that window is the spec's, not the policy's).
public struct BackoffJitter: LifecycleRule {
    public static let id = "backoff.jitter"
    public static let severity = Severity.warning
    public static let summary = "8 or more reconnect delays are plausibly uniform on [0, bound] (full jitter)"
    public static let observes: StepKinds = .attempt
    static let minimumDelays = 8
    static let significance = 0.01
    /// Enough for the test; older delays are dropped so memory stays bounded.
    static let maximumKept = 512
    let spec: LifecycleSpec
    var fractions: [Double] = []
    var last: [Evidence] = []
    var lastConn: ConnectionID = 0
    var lastTime: Micros = 0
    /// Whether every delay kept came from a full-jitter phase (the messages say "bound").
    var allFull = true
    public init(spec: LifecycleSpec) { self.spec = spec }

    public mutating func observe(_ step: TimelineStep, _ context: RuleContext) -> [Finding] {
        guard case .attempt(let attempt) = step, let check = ScheduleCheck(attempt, spec: spec),
              check.phase.jitter != .none, check.closeBand == nil, check.window.upper > check.window.lower else { return [] }
        let width = Double(check.window.upper - check.window.lower)
        fractions.append(min(1, max(0, Double(check.delay - check.window.lower) / width)))
        if check.phase.jitter != .full { allFull = false }
        if fractions.count > Self.maximumKept { fractions.removeFirst() }
        last = Array((last + check.evidence).suffix(6))
        lastConn = attempt.conn
        lastTime = attempt.t
        return []
    }

    public mutating func advance(to now: Micros, _ context: RuleContext) -> [Finding] { [] }

    public mutating func finish(at now: Micros, _ context: RuleContext) -> [Finding] {
        guard fractions.count >= Self.minimumDelays else { return [] }
        let n = fractions.count
        let sorted = fractions.sorted()
        if let first = sorted.first, let lastValue = sorted.last, lastValue - first < 1e-3 {
            return [finding(context, conn: lastConn, t: lastTime,
                            "all \(n) delays are \(format(first)) of their \(allFull ? "bound" : "window"): no jitter", evidence: last)]
        }
        let d = Self.ksStatistic(sorted)
        let p = Self.ksPValue(d: d, n: n)
        guard p < Self.significance else { return [] }
        return [finding(context, conn: lastConn, t: lastTime,
                        "\(n) delays not uniform on \(allFull ? "[0, bound]" : "their windows"): KS D = \(format(d)), p = \(String(format: "%.4f", p)) < \(Self.significance)",
                        evidence: last)]
    }

    /// D = sup |F_n(x) - x| for sorted samples in [0, 1].
    static func ksStatistic(_ sorted: [Double]) -> Double {
        let n = Double(sorted.count)
        var d = 0.0
        for (i, x) in sorted.enumerated() {
            d = max(d, Double(i + 1) / n - x, x - Double(i) / n)
        }
        return d
    }

    /// Asymptotic Kolmogorov distribution with Stephens' small-sample correction.
    static func ksPValue(d: Double, n: Int) -> Double {
        let sn = Double(n).squareRoot()
        let lambda = (sn + 0.12 + 0.11 / sn) * d
        var sum = 0.0
        for j in 1...100 {
            let term = 2 * (j % 2 == 1 ? 1.0 : -1.0) * exp(-2 * Double(j * j) * lambda * lambda)
            sum += term
            if abs(term) < 1e-12 { break }
        }
        return min(1, max(0, sum))
    }

    private func format(_ x: Double) -> String { String(format: "%.2f", x) }
}
