import Vocabulary

/// A client's hop from one replica to another: its connection ended on `from` and its next
/// connection opened on `to`. The client learned of the drop before it reconnected, so on
/// true clocks `reopenedAt` comes after `droppedAt`; a reconnect that reads as earlier than
/// its drop shows how far the two replicas' clocks disagree, at least.
package struct ClockHop: Sendable, Equatable {
    /// Replica indices (in the merge's order).
    package var from: Int
    package var to: Int
    /// Wall-clock microseconds, each on its own replica's clock.
    package var droppedAt: Int64
    package var reopenedAt: Int64
    /// The client key of the two connections (for the message).
    package var key: String

    package init(from: Int, to: Int, droppedAt: Int64, reopenedAt: Int64, key: String) {
        self.from = from
        self.to = to
        self.droppedAt = droppedAt
        self.reopenedAt = reopenedAt
        self.key = key
    }

    /// How much later `to`'s clock must be read for the reconnect to follow the drop by at
    /// least a microsecond: positive when the records are out of causal order.
    package var requiredShift: Int64 {
        let (gap, overflow) = droppedAt.subtractingReportingOverflow(reopenedAt)
        if overflow { return droppedAt > reopenedAt ? Self.limit : -Self.limit }
        return min(Self.limit, max(-Self.limit, gap)) + 1
    }

    /// Demands are clamped to about 35 years, so sums over a few hundred replicas never overflow.
    static let limit: Int64 = 1 << 50
}

/// Estimates the clock corrections of a merge from the hops the captures show: the least
/// shifts (each replica's correction is >= 0, at least one is 0) that put every reconnect
/// after its drop. Pure: the hops in, the corrections or the contradiction out.
///
/// Each hop says `correction[to] - correction[from] >= requiredShift`: a system of
/// difference constraints, solved by longest paths (Bellman-Ford) over the replicas. A
/// cycle that never settles means no shifts fit the evidence.
package enum ClockSkew {
    package struct Estimate: Sendable, Equatable {
        /// Microseconds to add to each replica's record times.
        package var corrections: [Int64]
        /// Per replica, the hop that set its correction (nil where none was needed).
        package var evidence: [ClockHop?]
        /// The largest difference between two corrections.
        package var spread: Int64 { (corrections.max() ?? 0) - (corrections.min() ?? 0) }
    }

    package enum Failure: Error, Equatable {
        /// The hops contradict each other: `hop` still demands more after every replica
        /// moved as far as the others demand (a cycle of reconnects each before its drop).
        case contradiction(ClockHop)
    }

    package static func estimate(replicas: Int, hops: [ClockHop]) -> Result<Estimate, Failure> {
        // Per ordered pair, the strongest demand only: the system stays replicas² big.
        var strongest: [Int: ClockHop] = [:]
        for hop in hops where hop.from != hop.to && (0..<replicas).contains(hop.from) && (0..<replicas).contains(hop.to) {
            let pair = hop.from * replicas + hop.to
            if let known = strongest[pair], known.requiredShift >= hop.requiredShift { continue }
            strongest[pair] = hop
        }
        let edges = strongest.keys.sorted().compactMap { strongest[$0] }
        var corrections = [Int64](repeating: 0, count: replicas)
        var evidence = [ClockHop?](repeating: nil, count: replicas)
        for round in 0...replicas {
            var moved = false
            for hop in edges {
                let wanted = corrections[hop.from] + hop.requiredShift
                guard wanted > corrections[hop.to] else { continue }
                if round == replicas { return .failure(.contradiction(hop)) }
                corrections[hop.to] = wanted
                evidence[hop.to] = hop
                moved = true
            }
            if !moved { break }
        }
        return .success(Estimate(corrections: corrections, evidence: evidence))
    }
}
