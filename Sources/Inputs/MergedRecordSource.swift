import Capture
import CLI
import JSON
import Vocabulary

/// The captures of several replicas read as one session (`analyze --merge`): a k-way merge
/// of their records by wall-clock time (each header's start plus the record's offset, plus
/// the replica's clock correction). Streaming: one record per replica is held, and each
/// replica's rotated parts are read one after the other as always.
///
/// Connection ids are per replica in the files; here they are renumbered in the order the
/// merged session meets them (so ids still grow in opening order, as the analysis expects)
/// and `replica(of:)` tells whose a connection is. Record times are made relative to the
/// earliest replica's (corrected) start, which is the merged header's `startedAt`.
/// A class: readers hold it as `any RecordSource` and still ask it `replica(of:)` as they go.
package final class MergedRecordSource: RecordSource {
    package let header: CaptureHeader
    /// Replica names, in the merge's order.
    package let replicas: [String]
    private var sources: [any RecordSource]
    /// Per replica: microseconds from the merged start to the replica's (corrected) start.
    private let shifts: [Int64]
    private var heads: [(record: CaptureRecord, at: Int64)?]
    private var started = false
    /// Per replica, its connection ids to the merged ones.
    private var ids: [[ConnectionID: ConnectionID]]
    /// The replica of merged connection n, at index n - 1.
    private var replicaOfID: [Int32] = []
    private let names: [String]

    /// `corrections`: microseconds added to each replica's clock (`ClockSkew`); `names`:
    /// what errors call each replica's input (its first file).
    package init(replicas: [String], sources: [any RecordSource], corrections: [Int64], names: [String]) throws {
        precondition(replicas.count == sources.count && corrections.count == sources.count && names.count == sources.count)
        var starts: [Int64] = []
        for (i, source) in sources.enumerated() {
            let (start, overflow) = source.header.startedAt.addingReportingOverflow(corrections[i])
            guard !overflow else { throw UsageError("\(names[i]): header start time \(source.header.startedAt) out of range") }
            starts.append(start)
        }
        let base = starts.min() ?? 0
        var shifts: [Int64] = []
        for (i, start) in starts.enumerated() {
            let (shift, overflow) = start.subtractingReportingOverflow(base)
            guard !overflow else { throw UsageError("\(names[i]): header start time \(start) too far from the other replicas' (\(base))") }
            shifts.append(shift)
        }
        self.shifts = shifts
        self.replicas = replicas
        self.sources = sources
        self.names = names
        heads = Array(repeating: nil, count: sources.count)
        ids = Array(repeating: [:], count: sources.count)
        var settings = JSONObject()
        settings["replicas"] = .array(replicas.map { .string($0) })
        settings["inputs"] = .array(names.map { .string($0) })
        settings["clock_corrections_us"] = .array(corrections.map { .int($0) })
        // The replicas' common producer ("proxy": readers such as export rely on it), else "merge".
        let producers = Set(sources.map(\.header.source))
        header = CaptureHeader(tool: sources.first?.header.tool ?? "", startedAt: base,
                               source: producers.count == 1 ? producers.first! : "merge", settings: settings)
    }

    /// Every replica's warnings, each prefixed by its replica's name.
    package var warnings: [String] {
        zip(replicas, sources).flatMap { name, source in source.warnings.map { "\(name): \($0)" } }
    }

    /// The replica (index into `replicas`) of a merged connection id.
    package func replica(of conn: ConnectionID) -> Int? {
        conn >= 1 && conn <= replicaOfID.count ? Int(replicaOfID[conn - 1]) : nil
    }

    package func next() throws -> CaptureRecord? {
        if !started {
            started = true
            for i in sources.indices { try advance(i) }
        }
        // A linear scan: replicas are few (tens), so a heap would not pay for itself.
        var best: Int?
        for i in heads.indices {
            guard let head = heads[i] else { continue }
            if let b = best, let current = heads[b], current.at <= head.at { continue }
            best = i
        }
        guard let i = best, let head = heads[i] else { return nil }
        try advance(i)
        return renumbered(head.record, replica: i, at: head.at)
    }

    private func advance(_ i: Int) throws {
        while let record = try sources[i].next() {
            guard let t = record.time else { continue }   // a part's own header
            let (at, overflow) = t.addingReportingOverflow(shifts[i])
            guard !overflow else { throw UsageError("\(names[i]): record time \(t) µs out of range") }
            heads[i] = (record, at)
            return
        }
        heads[i] = nil
    }

    private func id(_ conn: ConnectionID, replica: Int) -> ConnectionID {
        if let known = ids[replica][conn] { return known }
        replicaOfID.append(Int32(replica))
        let id = replicaOfID.count
        ids[replica][conn] = id
        return id
    }

    private func renumbered(_ record: CaptureRecord, replica i: Int, at t: Int64) -> CaptureRecord {
        switch record {
        case .header: return record
        case .open(var r): r.conn = id(r.conn, replica: i); r.t = t; return .open(r)
        case .upgrade(var r): r.conn = id(r.conn, replica: i); r.t = t; return .upgrade(r)
        case .frame(var r): r.conn = id(r.conn, replica: i); r.t = t; return .frame(r)
        case .end(var r): r.conn = id(r.conn, replica: i); r.t = t; return .end(r)
        case .fault(var r): r.conn = r.conn.map { id($0, replica: i) }; r.t = t; return .fault(r)
        case .note(var r): r.conn = r.conn.map { id($0, replica: i) }; r.t = t; return .note(r)
        case .tunnel(var r): r.conn = id(r.conn, replica: i); r.t = t; return .tunnel(r)
        case .http(var r): r.conn = id(r.conn, replica: i); r.t = t; return .http(r)
        }
    }
}
