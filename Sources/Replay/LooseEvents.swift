import Capture
import Vocabulary

/// How many frames of one loosely matched event name the recording and the live peer had,
/// over the whole replay: the report lists these so nothing is hidden.
public struct LooseTally: Sendable, Hashable {
    public var event: String
    public var treatment: PeerFrameClasses.Treatment
    public var recorded: Int
    public var live: Int

    public init(event: String, treatment: PeerFrameClasses.Treatment, recorded: Int, live: Int) {
        self.event = event
        self.treatment = treatment
        self.recorded = recorded
        self.live = live
    }
}

/// One connection's peer frames that are not lined up one by one (`timer`, `others`,
/// `ignored` event names): when the recording and the live peer sent them, and, at the end,
/// the loose check of the `timer` ones. Pure.
///
/// Counts are of firings: frames of one name less than the response window apart are one.
/// A timer event passes when the live count is within the tolerance of the recorded rate
/// over the live connection's lifetime (a peer's timer runs on the wall clock whatever the
/// replay's speed): with `e` = recorded count x live span / recorded span, from
/// floor(e x (1 - tolerance)) to ceil(e x (1 + tolerance)) + 1; and, with two or more
/// on both sides, when the median live interval is within the tolerance of the recorded one
/// (and never closer than the response window: bursts are not intervals).
///
/// Bounded, since the live peer feeds it: at most `maxNames` event names (later names are
/// tallied under `overflowName`) and `maxTimes` times kept per name and side (later frames
/// are counted, not timed: the check then sees the first `maxTimes`).
struct LooseEvents: Sendable {
    static let tolerance = 0.5
    static let maxNames = 64
    static let maxTimes = 10_000
    static let overflowName = "(more event names)"

    private(set) var recorded: [String: [Micros]] = [:]
    private(set) var live: [String: [Micros]] = [:]
    private var counts: [String: (recorded: Int, live: Int)] = [:]
    private var treatments: [String: PeerFrameClasses.Treatment] = [:]
    private var order: [String] = []

    mutating func noteRecorded(_ event: String, _ treatment: PeerFrameClasses.Treatment, at t: Micros) {
        let name = note(event, treatment)
        counts[name, default: (0, 0)].recorded += 1
        if recorded[name, default: []].count < Self.maxTimes { recorded[name, default: []].append(t) }
    }

    mutating func noteLive(_ event: String, _ treatment: PeerFrameClasses.Treatment, at t: Micros) {
        let name = note(event, treatment)
        counts[name, default: (0, 0)].live += 1
        if live[name, default: []].count < Self.maxTimes { live[name, default: []].append(t) }
    }

    /// The name to keep `event` under (the overflow name past `maxNames`).
    private mutating func note(_ event: String, _ treatment: PeerFrameClasses.Treatment) -> String {
        if treatments[event] != nil { return event }
        guard order.count < Self.maxNames else {
            if treatments[Self.overflowName] == nil {
                treatments[Self.overflowName] = .others   // counted, never checked
                order.append(Self.overflowName)
            }
            return Self.overflowName
        }
        treatments[event] = treatment
        order.append(event)
        return event
    }

    var tallies: [LooseTally] {
        order.map { LooseTally(event: $0, treatment: treatments[$0] ?? .strict, recorded: counts[$0]?.recorded ?? 0,
                               live: counts[$0]?.live ?? 0) }
    }

    /// A timer event outside the tolerance: fewer (`missing`), more (`extra`), or at
    /// another interval (`different`), with the numbers.
    struct Finding: Sendable, Hashable {
        var kind: Deviation.Kind
        var event: String
        var details: String
    }

    /// The loose check of every timer event, for a recorded connection that lasted
    /// `recordedSpan` and a live one that lasted `liveSpan`.
    func check(recordedSpan: Micros, liveSpan: Micros) -> [Finding] {
        guard recordedSpan > 0, liveSpan >= 0 else { return [] }
        var findings: [Finding] = []
        for event in order where treatments[event] == .timer {
            let times = Self.firings(recorded[event] ?? []), seen = Self.firings(live[event] ?? [])
            let expected = Double(times.count) * Double(liveSpan) / Double(recordedSpan)
            let low = Int((expected * (1 - Self.tolerance)).rounded(.down))
            let high = Int(min(1e9, (expected * (1 + Self.tolerance)).rounded(.up))) + 1
            let numbers = "\(seen.count) in \(ReplayTiming.describe(liveSpan)) live, \(times.count) in "
                + "\(ReplayTiming.describe(recordedSpan)) recorded (expected \(low)-\(high); sent on the peer's own timer, matched loosely)"
            if seen.count < low {
                findings.append(Finding(kind: .missing, event: event, details: numbers))
            } else if seen.count > high {
                findings.append(Finding(kind: .extra, event: event, details: numbers))
            } else if let want = Self.medianGap(times), let got = Self.medianGap(seen),
                      Double(abs(got - want)) > max(Double(want) * Self.tolerance, Double(PeerFrameClasses.responseWindow)) {
                findings.append(Finding(kind: .different, event: event,
                                        details: "every \(ReplayTiming.describe(got)) live (recorded every \(ReplayTiming.describe(want)); matched loosely)"))
            }
        }
        return findings
    }

    /// One time per firing of the peer's timer: frames less than the response window apart
    /// are one burst (a server's tick sends one frame per subscribed channel at once).
    static func firings(_ times: [Micros]) -> [Micros] {
        var out: [Micros] = []
        var last: Micros?
        for t in times {
            if let previous = last, t - previous < PeerFrameClasses.responseWindow {
                last = t
                continue
            }
            out.append(t)
            last = t
        }
        return out
    }

    /// The median gap between successive times; nil for fewer than two.
    static func medianGap(_ times: [Micros]) -> Micros? {
        guard times.count >= 2 else { return nil }
        let gaps = zip(times.dropFirst(), times).map { max(0, $0 - $1) }.sorted()
        return gaps[gaps.count / 2]
    }
}
