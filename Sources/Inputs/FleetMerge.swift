import Capture
import CLI
import Vocabulary

/// `--merge`: the inputs as the replicas of one fleet, read as one session. Each replica is
/// one input, or the parts of one rotated recording. Two passes over the files: the first
/// collects the hops clients made between replicas (`HopEvidence`) and estimates the clock
/// corrections (`ClockSkew`); the second is the merge itself (`MergedRecordSource`). Both
/// stream, so a pipe or standard input, readable once only, cannot be merged. Memory:
/// the first pass keeps a small summary per connection (bounded, `HopEvidence.limit`), the
/// merge an id per connection; records and frames stream.
package enum FleetMerge {
    package struct Plan {
        package var source: MergedRecordSource
        /// For the report: the clock corrections made and why; warnings of the first pass.
        package var notes: [String]
    }

    /// How far before its drop a reconnect may read and still count as the same client's
    /// hop (with a larger --max-skew, ten times that): past it, another client of the key.
    package static let plausibleSkew: Micros = 1_000_000

    /// The most replicas one merge takes (the merge scans every replica per record).
    package static let maxReplicas = 256

    package static func open(_ paths: [String], options: InputSources.Options, keyOf: @escaping HopEvidence.KeyOf,
                             maxSkew: Micros, command: String) throws -> Plan {
        if let piped = paths.first(where: { $0 == "-" || !CaptureWriter.isRegularFile($0) }) {
            throw UsageError("\(command): --merge reads each input twice, so it needs files: '\(piped == "-" ? "<stdin>" : piped)' is not a regular file")
        }
        let (sets, warnings) = InputSets.group(paths)
        guard sets.count >= 2 else {
            throw UsageError("\(command): --merge needs the captures of two replicas or more (got \(sets.count == 1 && sets[0].count > 1 ? "the parts of one rotated recording" : "one input"))")
        }
        guard sets.count <= maxReplicas else {
            throw UsageError("\(command): --merge takes at most \(maxReplicas) replicas (got \(sets.count))")
        }
        var evidence = HopEvidence(keyOf: keyOf)
        var headers: [CaptureHeader] = []
        for (i, set) in sets.enumerated() {
            var source = try InputSets.open(set, options: options)
            guard source.header.source != "pcap" else {
                throw UsageError("\(command): --merge reads proxy captures; '\(set[0])' is a pcap (its clock and connections are not a replica's)")
            }
            headers.append(source.header)
            evidence.begin(replica: i, startedAt: source.header.startedAt)
            while let record = try source.next() { evidence.observe(record) }
        }
        let names = replicaNames(headers, files: sets.map { $0[0] })
        let estimate: ClockSkew.Estimate
        // Reconnects up to 1 s (or ten times --max-skew) before their drop are evidence of
        // skew, so skew past --max-skew is seen and refused; further back, another client of the key.
        let (tenfold, overflow) = maxSkew.multipliedReportingOverflow(by: 10)
        let plausible = overflow ? Int64.max : max(tenfold, Self.plausibleSkew)
        switch ClockSkew.estimate(replicas: sets.count, hops: evidence.hops(plausible: plausible)) {
        case .success(let found): estimate = found
        case .failure(.contradiction(let hop)):
            throw UsageError("\(command): --merge: the replicas' clocks cannot be reconciled: client '\(hop.key)' reconnected on \(names[hop.to]) \(milliseconds(hop.requiredShift - 1)) ms before its drop on \(names[hop.from]), and other hops demand the opposite; check the replicas' clocks (NTP)")
        }
        if estimate.spread > maxSkew, let worst = estimate.corrections.indices.max(by: { estimate.corrections[$0] < estimate.corrections[$1] }),
           let hop = estimate.evidence[worst] {
            throw UsageError("\(command): --merge: \(names[worst])'s clock is at least \(milliseconds(estimate.spread)) ms behind \(names[hop.from])'s (client '\(hop.key)' reconnected on \(names[worst]) \(milliseconds(hop.requiredShift - 1)) ms before its drop on \(names[hop.from])), more than --max-skew \(milliseconds(maxSkew)) ms; raise --max-skew to let the merge correct it, or fix the clocks")
        }
        var notes = warnings
        if let warning = evidence.warning { notes.append(warning) }
        for (i, correction) in estimate.corrections.enumerated() where correction != 0 {
            guard let hop = estimate.evidence[i] else { continue }
            notes.append("merge: \(names[i])'s clock corrected by +\(milliseconds(correction)) ms: at least that far behind \(names[hop.from])'s (client '\(hop.key)' reconnected on \(names[i]) before its drop on \(names[hop.from]))")
        }
        let sources = try sets.map { try InputSets.open($0, options: options) }
        let merged = try MergedRecordSource(replicas: names, sources: sources, corrections: estimate.corrections, names: sets.map { $0[0] })
        return Plan(source: merged, notes: notes)
    }

    /// What reports call each replica: the name given to `proxy --replica`, else its
    /// input's file name; a name that repeats gets its input's position added.
    package static func replicaNames(_ headers: [CaptureHeader], files: [String]) -> [String] {
        let names = zip(headers, files).map { header, file in
            header.replicaName ?? String(file.split(separator: "/").last.map(String.init) ?? file)
        }
        return names.enumerated().map { i, name in
            names.filter { $0 == name }.count > 1 ? "\(name)#\(i + 1)" : name
        }
    }

    /// "30.2": microseconds as milliseconds with one decimal.
    static func milliseconds(_ micros: Int64) -> String {
        let tenths = micros / 100
        return "\(tenths / 10).\(abs(tenths % 10))"
    }
}
