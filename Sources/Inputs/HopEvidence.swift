import Capture
import Vocabulary

/// The first pass of a merge: each replica's connections as the clock estimate needs them
/// (client key, when it opened, when the client was first told it was over), then the hops
/// of each client from one replica to another (`ClockSkew`). Pure: records in, hops out.
///
/// Memory: one small summary per connection, at most `limit` of them over all replicas;
/// past that the estimate rests on the first `limit` connections and a warning says so.
package struct HopEvidence {
    /// How a connection is grouped into a client (the analysis's `--client-key`).
    package typealias KeyOf = @Sendable (OpenRecord?, UpgradeRecord?) -> String

    struct Summary {
        var replica: Int
        var key: String
        var openedAt: Int64
        var droppedAt: Int64?
    }

    package static let standardLimit = 500_000
    package let limit: Int
    private let keyOf: KeyOf
    private var summaries: [Summary] = []
    /// The current replica's connections: id -> index in `summaries`, and the open record
    /// (its client address is part of the standard key, completed by the upgrade request).
    private var current: [ConnectionID: (index: Int, open: OpenRecord)] = [:]
    private var replica = 0
    private var origin: Int64 = 0
    package private(set) var skipped = 0

    package init(keyOf: @escaping KeyOf, limit: Int = HopEvidence.standardLimit) {
        self.keyOf = keyOf
        self.limit = limit
    }

    /// The records that follow come from `replica`, whose header says it started at `startedAt`.
    package mutating func begin(replica: Int, startedAt: Int64) {
        self.replica = replica
        origin = startedAt
        current = [:]
    }

    package mutating func observe(_ record: CaptureRecord) {
        switch record {
        case .open(let open):
            guard summaries.count < limit else { skipped += 1; return }
            guard let at = wall(open.t) else { return }
            current[open.conn] = (summaries.count, open)
            summaries.append(Summary(replica: replica, key: keyOf(open, nil), openedAt: at))
        case .upgrade(let upgrade):
            guard let (i, open) = current[upgrade.conn] else { return }
            if upgrade.from == .client {
                summaries[i].key = keyOf(open, upgrade)
            } else if upgrade.status != 101 {
                dropped(i, at: upgrade.t)
            }
        case .frame(let frame) where frame.opcode == .close && (frame.from == .client || frame.action != .dropped):
            if let i = current[frame.conn]?.index { dropped(i, at: frame.t) }
        case .end(let end) where end.seenByClient:
            if let i = current[end.conn]?.index { dropped(i, at: end.t) }
        default:
            break
        }
    }

    /// Each client's moves between replicas: consecutive connections of one key (in the
    /// order they opened) on two replicas, the first of which ended. Keys of several
    /// clients (two behind one NAT with one User-Agent) are left out whole: a key that had
    /// two connections at once on one replica (`overlapsOnOneReplica`), or anywhere a
    /// connection that opened more than `plausible` before the previous one dropped, or
    /// after one that never dropped. No clock is that far off in a fleet worth merging.
    package func hops(plausible: Int64 = .max) -> [ClockHop] {
        var byKey: [String: [Int]] = [:]
        for (i, s) in summaries.enumerated() { byKey[s.key, default: []].append(i) }
        var hops: [ClockHop] = []
        for key in byKey.keys.sorted() {
            let order = byKey[key]!.sorted { (summaries[$0].openedAt, $0) < (summaries[$1].openedAt, $1) }
            guard !overlapsOnOneReplica(order) else { continue }
            var found: [ClockHop] = []
            var severalClients = false
            for (a, b) in zip(order, order.dropFirst()) {
                let (first, next) = (summaries[a], summaries[b])
                // A connection followed by the next with no drop between, or by one opening
                // far before the drop: two connections at once, so several clients (or one
                // that misbehaves, which the analysis reports): no evidence from this key.
                guard let dropped = first.droppedAt else { severalClients = true; break }
                let hop = ClockHop(from: first.replica, to: next.replica, droppedAt: dropped, reopenedAt: next.openedAt, key: key)
                guard hop.requiredShift <= plausible else { severalClients = true; break }
                if first.replica != next.replica { found.append(hop) }
            }
            if !severalClients { hops += found }
        }
        return hops
    }

    /// Whether two of these connections (one key's, in opening order) were open at once on
    /// one replica: then the key is several clients (one NAT, one User-Agent), whose
    /// connections cannot be paired into hops, and the key is no evidence at all.
    func overlapsOnOneReplica(_ order: [Int]) -> Bool {
        var lastDrop: [Int: Int64?] = [:]   // per replica: its latest connection's drop (nil: never dropped)
        for i in order {
            let s = summaries[i]
            if let previous = lastDrop[s.replica] {
                guard let dropped = previous, dropped <= s.openedAt else { return true }
            }
            lastDrop[s.replica] = .some(s.droppedAt)
        }
        return false
    }

    /// The warning for connections left out of the estimate, if any were.
    package var warning: String? {
        skipped > 0 ? "clock skew estimated from the first \(limit) connections only (\(skipped) more not used)" : nil
    }

    private mutating func dropped(_ i: Int, at t: Micros) {
        guard summaries[i].droppedAt == nil, let at = wall(t) else { return }
        summaries[i].droppedAt = at
    }

    private func wall(_ t: Micros) -> Int64? {
        let (sum, overflow) = origin.addingReportingOverflow(t)
        return overflow ? nil : sum
    }
}
