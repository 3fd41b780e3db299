import Vocabulary

/// The demo's live view in time order. Its lines come from two places: the sim clients'
/// state changes, stamped when they happen, and the live check's findings, stamped with the
/// time they are about (a pong deadline), which the check can only emit once a later event
/// has shown the deadline passed. Printed as they came, a finding at 3.019 s followed the
/// client's close at 3.020 s. So lines are held for `hold` and let out sorted by time.
/// Pure: the caller passes the loop's time and prints what comes out.
package struct LiveViewOrder {
    /// How long a line waits for earlier-stamped lines to arrive.
    package static let hold: Micros = 250_000
    /// Lines held at most; past it the oldest go out at once (the order may then slip, but
    /// memory stays bounded whatever the clients do).
    package static let maxHeld = 10_000

    private var held: [(t: Micros, sequence: Int, line: String)] = []
    private var sequence = 0

    package init() {}

    /// Holds `line`, stamped `t`; returns lines pushed out by the bound, if any.
    package mutating func add(_ line: String, at t: Micros) -> [String] {
        sequence += 1
        held.append((t, sequence, line))
        guard held.count > Self.maxHeld else { return [] }
        sortHeld()
        return [held.removeFirst().line]
    }

    /// Lines stamped at or before `now - hold`, in time order (ties: in arrival order).
    package mutating func due(at now: Micros) -> [String] {
        let (limit, overflow) = now.subtractingReportingOverflow(Self.hold)
        guard !overflow else { return [] }
        sortHeld()
        let count = held.prefix { $0.t <= limit }.count
        defer { held.removeFirst(count) }
        return held.prefix(count).map(\.line)
    }

    /// Every line still held, in time order: at the end of the run.
    package mutating func drain() -> [String] {
        sortHeld()
        defer { held.removeAll() }
        return held.map(\.line)
    }

    private mutating func sortHeld() {
        held.sort { $0.t != $1.t ? $0.t < $1.t : $0.sequence < $1.sequence }
    }

    /// The time a live-check line is about: "3.019 s  client-1 ..." is 3.019 s. Nil when the
    /// line does not start with one.
    package static func time(of line: Substring) -> Micros? {
        guard let space = line.firstIndex(of: " "), line[space...].hasPrefix(" s "),
              let seconds = Double(line[..<space]), seconds >= 0, seconds < 1e9 else { return nil }
        return Micros((seconds * 1_000_000).rounded())
    }
}
