import Capture
import Vocabulary

extension LifecycleSpec {
    /// Floors that apply only after short sessions (a spec's `backoff.shortSessions`): a
    /// client that keeps connecting and losing the connection soon after waits longer,
    /// whatever its attempt count says. phoenix-channels-python-client 0.4.1 does this
    /// (`reconnect_controller.py` `_record_disconnect` and `_rapid_min_delay`): a session
    /// that lived less than `rapid_disconnect_uptime_s` (5 s) counts as rapid, the rapid
    /// ones of the last `rapid_window_s` (60 s) are counted at each disconnect, and the next
    /// delay is `max(exponential, floor)` with the floor 2 s after one, 10 s after two,
    /// before its equal jitter spreads it.
    public struct ShortSessionFloors: Sendable, Hashable {
        /// A connected session that dropped before this much uptime is a short one.
        public var uptimeBelow: Micros
        /// Short sessions whose drops lie within this long of the latest one are counted.
        public var within: Micros
        /// The floor after n short sessions is `floors[n-1]`; past the table, its last.
        public var floors: [Micros]
        /// Whether the floor raises d before the jitter spreads it (the client computes
        /// `max(d, floor)`, then jitters), or raises the window's ends after it.
        public var applied: FloorApplied

        public init(uptimeBelow: Micros, within: Micros, floors: [Micros], applied: FloorApplied = .beforeJitter) {
            self.uptimeBelow = uptimeBelow
            self.within = within
            self.floors = floors
            self.applied = applied
        }

        /// The floor after `count` short sessions (nil for none).
        public func floor(after count: Int) -> Micros? {
            guard count > 0, !floors.isEmpty else { return nil }
            return floors[min(count, floors.count) - 1]
        }
    }

    public enum FloorApplied: String, Sendable, Hashable, CaseIterable {
        case beforeJitter, afterJitter
    }
}

extension LifecycleSpec.BackoffSpec {
    /// The floor under the delay after a drop that counted `shortSessions`, and how it applies.
    public func shortSessionFloor(after shortSessions: Int) -> (floor: Micros, applied: LifecycleSpec.FloorApplied)? {
        guard let rule = self.shortSessions, let floor = rule.floor(after: shortSessions) else { return nil }
        return (floor, rule.applied)
    }
}

/// The short sessions of one client, for `ShortSessionFloors`: the drop times of the latest
/// short ones, at most as many as the floors table holds (past it, every count has the last
/// floor), so the memory is bounded whatever the input.
struct ShortSessionCount: Sendable, Hashable {
    private var drops: [Micros] = []

    /// A connected session of `uptime` dropped at `t`: counts it when short, forgets the
    /// short ones older than `within`, and returns how many are left, as the client counts
    /// them at its disconnect. Sessions that never connected are not passed here (the
    /// client records only disconnects of sessions it had).
    mutating func noteDrop(uptime: Micros, at t: Micros, _ rule: LifecycleSpec.ShortSessionFloors) -> Int {
        if uptime < rule.uptimeBelow { drops.append(t) }
        drops.removeAll { t.subtractingSaturated($0) > rule.within }
        if drops.count > rule.floors.count { drops.removeFirst(drops.count - rule.floors.count) }
        return drops.count
    }

    /// The latest count, for drops of sessions that never connected.
    var count: Int { drops.count }

    /// The client's counter reset (a stable session, or the app's connect()).
    mutating func reset() { drops.removeAll() }
}
