import CLI
import Capture
import Inputs
import Lifecycle
import ProtocolTable
import Reports
import Vocabulary

/// One analysis of captures or pcaps, as `faultline analyze`, the demo and FaultlineKit
/// run it: the inputs opened by their first bytes (compressed, rotated parts, a fleet's
/// replicas with `merge`), the spec chosen (`SpecChoice`, else the recorded one, else
/// detection), every record fed to the lifecycle engine on one thread or `jobs`, and one
/// report with what the engine could not see said in it: the sources' warnings and stream
/// errors, the clients judged at connection level, the checks left undetermined and the
/// rules not checked.
///
/// Several inputs are analysed separately into one report, client ids prefixed by input
/// number; with `merge` they are one session.
public struct AnalysisRun {
    public var inputs: [String]
    public var options: AnalysisOptions
    /// What the run tells the user on the side (which spec judges, an input recorded under
    /// another spec), one line each, unescaped: the sink escapes it.
    public var notice: (String) -> Void

    public init(inputs: [String], options: AnalysisOptions, notice: @escaping (String) -> Void = { _ in }) {
        self.inputs = inputs
        self.options = options
        self.notice = notice
    }

    /// Reads every input to its end and returns the report. Throws `UsageError` for an
    /// input that cannot be read or holds no connection, and for a spec that does not load.
    public func run() throws -> AnalysisReport {
        let command = options.command
        // With several jobs, a capture's lines and a pcap's flows are decoded on worker
        // threads too (not when merging: each of a fleet's inputs would hold its own runs in
        // flight).
        let filter = InputSources.Options(filter: options.filter, jobs: options.merge ? 1 : options.jobs)
        precondition(!inputs.isEmpty, "an analysis needs an input")
        // A rotated recording's parts are one input; each other input stands alone, unless
        // `merge` makes them all one session.
        var sets: [[String]]
        var warnings: [String]
        var merged: FleetMerge.Plan?
        if options.merge {
            let grouping = options.clientKey
            merged = try FleetMerge.open(inputs, options: filter, keyOf: { grouping.key(open: $0, request: $1) },
                                         maxSkew: options.maxSkew, command: command)
            (sets, warnings) = ([inputs], merged?.notes ?? [])
        } else {
            (sets, warnings) = InputSets.group(inputs)
        }
        let fleetSource = merged?.source   // each connection's replica, read after the merge
        // The spec is chosen on the first input (with `merge`, the merged session); records
        // read ahead for detection are handed on to the analysis: the input is read once.
        var firstSource: any RecordSource = try fleetSource ?? InputSets.open(sets[0], options: filter)
        let recorded = firstSource.header.spec
        let spec: LifecycleSpec
        var perClient: SpecPerClientRun?
        if options.spec.givesNone && recorded == nil {
            var detection = EntryDetection()
            firstSource = try ReadAheadSource(firstSource, detecting: &detection)
            let base = try SpecResolution.load(detection.specName, given: false, command: command)
            spec = options.spec.overrides.apply(to: base)
            notice("\(command): \(detection.line)")
            // Each client is judged by the pack detected on it; this spec judges the rest.
            perClient = SpecPerClientRun(overrides: options.spec.overrides, command: command)
        } else {
            let resolved = try SpecResolution.resolve(options.spec, recorded: recorded, input: sets[0][0], command: command)
            if let note = resolved.note { notice(note) }
            spec = resolved.spec
        }
        var feed = Feed(spec: spec, options: options, inputCount: sets.count, perClient: perClient)
        for (i, set) in sets.enumerated() {
            let source = try i == 0 ? firstSource : InputSets.open(set, options: filter)
            if i > 0, options.spec.givesNone, source.header.spec != recorded {
                notice("\(command): \(set[0]): recorded under another spec than the first input; judged by the first's (--spec NAME chooses one for all)")
            }
            try feed.read(source, input: i, parts: set)
        }
        warnings += feed.warnings
        let judged = feed.perClient?.used(fallback: spec) ?? [spec]
        if judged.count > 1, let line = feed.perClient?.notice(fallback: spec) { notice("\(command): \(line)") }
        var report = feed.builder().build(spec: judged.count == 1 ? judged[0] : spec, inputs: inputs,
                                          grouping: options.clientKey.description,
                                          prefix: feed.prefix, warnings: warnings, endTime: feed.end,
                                          unchecked: SpecPerClientRun.unchecked(judged, appSecret: options.appSecret,
                                                                                authSeen: feed.authSeen),
                                          failOn: options.failOn, startedAt: sets.count == 1 ? feed.startedAt : nil)
        if let perClient = feed.perClient { perClient.mark(&report, fallback: spec) }
        report.authRequests = feed.authRequests
        // Each connection's replica: when merging, or when a lone capture names its replica.
        if let fleet = fleetSource {
            report.labelReplicas { fleet.replica(of: $0).map { fleet.replicas[$0] } }
        } else if sets.count == 1, let name = feed.replicaName {
            report.labelReplicas { _ in name }
        }
        return report
    }
}

/// The inputs of one run fed to the engine one after another, and what is gathered beside
/// the engine's events: the last time seen, the stream errors, the auth exchanges and
/// whether any auth was seen.
private struct Feed {
    let spec: LifecycleSpec
    let options: AnalysisOptions
    let inputCount: Int
    /// Without a spec chosen: each client's own (`SpecPerClientRun`), `spec` the fallback.
    private(set) var perClient: SpecPerClientRun?
    /// One thread's builder; with several jobs, one merged builder per input in `parts`.
    private var single: ReportBuilder
    private var parts: [ReportBuilder] = []
    private var stepsSoFar = 0
    /// `single` was given numbered events (each client judged by its own pack).
    private var numbered = false
    private var clientsSoFar = 0
    private(set) var warnings: [String] = []
    private(set) var prefix: String?
    private(set) var end: Micros = 0
    private(set) var startedAt: Int64?
    private(set) var replicaName: String?
    /// Auth requests paired with subscribes, reported for one input alone (connection
    /// numbers are per input).
    private(set) var authRequests: [AuthRequestLink] = []
    /// Whether any input's subscribes or sign-ins carried auth, as the engines decoded them
    /// (else the rules judging auth had nothing to check, and are not listed as unchecked).
    private(set) var authSeen = false

    init(spec: LifecycleSpec, options: AnalysisOptions, inputCount: Int, perClient: SpecPerClientRun? = nil) {
        self.spec = spec
        self.options = options
        self.inputCount = inputCount
        self.perClient = perClient
        single = ReportBuilder(limits: options.limits)
    }

    /// Input `input` (its files `parts`) read to its end through the engine.
    mutating func read(_ source: any RecordSource, input i: Int, parts set: [String]) throws {
        var source = source
        let path = set[0]
        let several = inputCount > 1
        let analyzerOptions = AnalyzerOptions(spec: spec, clientKey: options.clientKey, prefix: options.prefix,
                                              appSecret: options.appSecret, clientIDPrefix: several ? "\(i + 1)/" : "")
        var last: Micros = 0
        var notes = StreamNotes()
        var inventory = InputInventory()
        var label = "analyze"
        if several { label += " \(i + 1)/\(inputCount)" }
        let progress = options.showsProgress ? InputProgress.line(label, reading: set) : nil
        defer { progress?.finish() }
        var warnings: [String] = []
        var linker = AuthRequestLinker(wire: ProtocolTable.standard.entry(for: spec.events.rawValue, prefix: options.prefix ?? spec.prefix))
        func look(at record: CaptureRecord) {
            progress?.tick()
            inventory.observe(record)
            if let t = record.time { last = max(last, t) }
            if case .note(let note) = record, let line = notes.take(note) {
                // Stream errors mean frames the analysis did not see: reported.
                warnings.append(several ? "\(path): \(line)" : line)
            }
            linker.observe(record)
        }
        let analyzerNotes: [String]
        let specs = perClient?.specs(fallback: analyzerOptions)
        if options.jobs > 1 {
            let analysis = ShardedAnalysis(options: analyzerOptions, jobs: options.jobs, limits: options.limits,
                                           firstStep: stepsSoFar, firstOrdinal: clientsSoFar, perClient: specs,
                                           spentPayloads: source.spentPayloads)
            while let record = try source.next() {
                look(at: record)
                analysis.feed(consume record)
            }
            let result = analysis.finish(at: last)
            parts.append(result.builder)
            stepsSoFar = analysis.lastStep
            clientsSoFar += analysis.clientCount
            analyzerNotes = result.notes
            prefix = prefix ?? result.prefix
            authSeen = authSeen || analysis.authSeen
            perClient?.add(analysis.specNumbers)
        } else if let specs {
            // Events come numbered (a client's first steps wait for its detection): the
            // builder puts them in place, as the sharded analysis's are.
            var analyzer = SpecPerClientAnalyzer(specs: specs, firstStep: stepsSoFar)
            let ordinals = clientsSoFar
            while let record = try source.next() {
                look(at: record)
                // `consume`: the record moves on to the router (its last use here).
                analyzer.feed(consume record) { single.add($0, step: $1, newClient: $2.map { $0 + ordinals }) }
            }
            analyzer.finish(at: last) { single.add($0, step: $1, newClient: $2.map { $0 + ordinals }) }
            stepsSoFar = analyzer.lastStep
            clientsSoFar += analyzer.clientCount
            analyzerNotes = analyzer.notes
            prefix = prefix ?? analyzer.prefix
            authSeen = authSeen || analyzer.authSeen
            perClient?.add(analyzer.specNumbers)
            numbered = true
        } else {
            var analyzer = LiveAnalyzer(options: analyzerOptions)
            while let record = try source.next() {
                look(at: record)
                single.add(analyzer.feed(consume record))
            }
            analyzer.finish(at: last) { single.add($0) }
            analyzerNotes = analyzer.notes
            prefix = prefix ?? analyzer.prefix
            authSeen = authSeen || analyzer.authSeen
        }
        if let line = notes.omittedLine { warnings.append(several ? "\(path): \(line)" : line) }
        // An input without a connection is a broken setup, not a clean result.
        if let message = inventory.noConnectionMessage(path, source: (source as? ReadAheadSource)?.underlying ?? source) {
            throw UsageError("\(options.command): \(message)")
        }
        end = max(end, last)
        // The first input's wall-clock start: with several, times stay relative to their own.
        if i == 0, source.header.startedAt > 0 { startedAt = source.header.startedAt }
        if !several { (replicaName, authRequests) = (source.header.replicaName, linker.links) }
        self.warnings += warnings
        self.warnings += source.warnings.map { several ? "\(path): \($0)" : $0 }
        self.warnings += analyzerNotes   // clients analyzed at connection level, said so
    }

    /// The builder holding every input's events (consumed: call once).
    mutating func builder() -> ReportBuilder {
        if options.jobs > 1, !numbered {
            let taken = parts
            parts = []
            return ReportBuilder.merged(taken)
        }
        // Taken, not copied: the feed keeping its own would keep every client's log alive
        // while the report is built from them.
        let taken = single
        single = ReportBuilder(limits: options.limits)
        return numbered ? ReportBuilder.merged([taken]) : taken
    }
}
