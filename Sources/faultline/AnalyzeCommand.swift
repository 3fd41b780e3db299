import CLI
import Capture
import Foundation
import Faults
import Inputs
import Lifecycle
import ProtocolTable
import Reports
import Vocabulary

/// `faultline analyze INPUT...`: rebuilds each client's timeline from captures and checks
/// it against a lifecycle spec. Exit 0 without error findings, 1 with one, 2 for unusable
/// input or command line.
enum AnalyzeCommand: Command {
    static let spec = CommandSpec(
        name: "analyze",
        abstract: "Check the connection lifecycle of every client in captures against a spec.",
        discussion: """
            INPUT is a faultline capture (or '-' for standard input); its kind is detected from
            its first bytes. Connections are grouped into clients, each client's state timeline
            is rebuilt and checked against the spec's rules (docs/spec-format.md). Several
            inputs are analysed separately into one report, client ids prefixed by input number,
            except the parts of one rotated recording (proxy --rotate), which are read in part order
            as one input. With --merge the inputs are the captures of several replicas of one
            fleet (proxy --replica), read as one session: records in wall-clock order, a client
            that reconnects on another replica stays one client, and each connection's replica
            is shown; clock skew the records prove (a reconnect before its drop) is corrected up
            to --max-skew and reported, more is refused. Captures may be zstd- or gzip-compressed.
            Exit status: 0 no finding at or above --fail-on (error by default), 1 such findings,
            2 unusable input or command line. Checks that the capture ended too early to decide
            are reported as undetermined; they never change the exit status. A capture recorded
            with spec options (proxy --spec, --pong-timeout ..., and the demo's) carries its spec
            and values, which judge it unless --spec or a value is given here (standard error
            says which spec was used). Durations are
            seconds (0.25) or take a unit (250ms, 1.5s, 2m). The rules, with examples, are listed
            by 'faultline specs rules' and explained by --explain RULE (and docs/rules.md).
            """,
        usage: "faultline analyze <input> ... [options]  |  faultline analyze --explain <rule>",
        arguments: [ArgumentSpec("input", help: "Captures or pcaps to analyse, or '-' for standard input (required unless --explain).",
                                 optional: true, variadic: true)],
        options: [
            OptionSpec("spec", value: "name|file",
                       help: "Lifecycle spec: bird, pusher, websocket (connection level, any client), agora-rtm, agora-rtm-stream, graphql-ws, or a JSON spec file (default: the detected protocol's, else bird)."),
            OptionSpec("format", value: "format", help: "Report format.", default: "text",
                       choices: ReportFormat.allCases.map(\.rawValue)),
            OptionSpec("explain", value: "rule", help: "Explain one rule (what breaks it, an example) and exit; 'faultline specs rules' lists them."),
            OptionSpec("fail-on", value: "severity",
                       help: "Least severe finding that makes the exit status 1: error, warning, or never.",
                       default: "error", choices: FailOn.allCases.map(\.rawValue)),
            OptionSpec("output", value: "file", help: "Write the report to FILE instead of standard output (default: stdout)."),
            OptionSpec("app-secret", value: "secret", help: "App secret: verify HMAC auth and sign-in signatures (default: not checked)."),
            OptionSpec("client-key", value: "key",
                       help: "Group connections by header:NAME or query:NAME (default: source IP + User-Agent + path)."),
            OptionSpec("protocol-prefix", value: "prefix", help: "Event prefix, bird or pusher (default: detected from the handshake)."),
            OptionSpec("jobs", value: "n",
                       help: "Worker threads the clients are spread over; the report is the same for any N (default: the number of cores)."),
            OptionSpec("filter", value: "bpf", help: "BPF filter for pcap input (default: none; ignored for captures)."),
        ] + FleetInputs.options(merge: "Read the inputs as the replicas of one fleet: one session in wall-clock order (default: each input apart).")
          + SpecOptions.overrides)

    static func run(_ arguments: ParsedArguments) throws -> Int32 {
        let command = arguments.command
        if let rule = arguments.value("explain") { return try explain(rule, command: command) }
        guard !arguments.positionals.isEmpty else { throw UsageError("\(command): missing argument <input>") }
        let format = ReportFormat(rawValue: arguments.value("format") ?? "text") ?? .text
        let failOn = FailOn(rawValue: arguments.value("fail-on") ?? "error") ?? .error
        var clientKey = ClientKeyMode.standard
        if let raw = arguments.value("client-key") {
            guard let parsed = ClientKeyMode(parsing: raw) else {
                throw UsageError("\(command): invalid value '\(raw)' for '--client-key': expected header:NAME or query:NAME")
            }
            clientKey = parsed
        }
        let inputs = arguments.positionals
        let filter = InputSources.Options(filter: arguments.value("filter"))
        // A rotated recording's parts are one input; each other input stands alone, unless
        // --merge makes them all one session.
        var sets: [[String]]
        var warnings: [String]
        var merged: FleetMerge.Plan?
        if arguments.flag("merge") {
            let maxSkew = try SpecOptions.duration(arguments, "max-skew") ?? 50_000
            let grouping = clientKey
            merged = try FleetMerge.open(inputs, options: filter, keyOf: { grouping.key(open: $0, request: $1) },
                                         maxSkew: maxSkew, command: command)
            (sets, warnings) = ([inputs], merged?.notes ?? [])
        } else {
            (sets, warnings) = InputSets.group(inputs)
        }
        try FleetInputs.checkSkew(arguments, command: command)
        let fleetSource = merged?.source   // each connection's replica, read after the merge
        // The spec: --spec; else the one the first input was recorded under; else the protocol
        // table's choice from the first input's upgrade and first messages (with --merge, the
        // merged session's), read ahead once: the source hands them on to the analysis.
        var firstSource: any RecordSource = try fleetSource ?? InputSets.open(sets[0], options: filter)
        let recorded = firstSource.header.spec
        var spec: LifecycleSpec
        if arguments.all("spec").isEmpty && recorded == nil {
            var detection = EntryDetection()
            firstSource = try ReadAheadSource(firstSource, detecting: &detection)
            spec = try SpecOptions.overrides(arguments).apply(to: SpecOptions.load(detection.specName, arguments))
            Console.err(TerminalText.escape("\(command): \(detection.line)") + "\n")
        } else {
            let resolved = try SpecOptions.resolve(arguments, recorded: recorded, input: sets[0][0])
            if let note = resolved.note { Console.err(TerminalText.escape(note) + "\n") }
            spec = resolved.spec
        }
        let jobs = try arguments.parse("jobs", as: "a number of threads from 1 to 256") { text in
            Int(text).flatMap { (1...256).contains($0) ? $0 : nil }
        } ?? defaultJobs
        var builder = ReportBuilder()
        /// With several jobs: one merged builder per input, merged again at the end.
        var parts: [ReportBuilder] = []
        var stepsSoFar = 0
        var clientsSoFar = 0
        var replicaOf: (ConnectionID) -> String? = { _ in nil }
        var prefix: String?
        var end: Micros = 0
        var startedAt: Int64?
        // Auth requests are paired with subscribes within one input (connection numbers are per input).
        var linker = sets.count == 1 ? AuthRequestLinker(wire: ProtocolTable.standard.entry(for: spec.events.rawValue, prefix: arguments.value("protocol-prefix") ?? spec.prefix)) : nil
        for (i, set) in sets.enumerated() {
            let path = set[0]
            var source = try i == 0 ? firstSource : InputSets.open(set, options: filter)
            if i > 0, arguments.all("spec").isEmpty, source.header.spec != recorded {
                Console.err(TerminalText.escape("\(command): \(path): recorded under another spec than the first input; judged by the first's (--spec NAME chooses one for all)") + "\n")
            }
            let options = AnalyzerOptions(
                spec: spec, clientKey: clientKey, prefix: arguments.value("protocol-prefix"),
                appSecret: arguments.value("app-secret"), clientIDPrefix: sets.count > 1 ? "\(i + 1)/" : "")
            var last: Micros = 0
            var notes = StreamNotes()
            var inventory = InputInventory()
            let progress = InputProgress.line("analyze \(sets.count > 1 ? "\(i + 1)/\(sets.count)" : "")".trimmingCharacters(in: .whitespaces), reading: set)
            defer { progress?.finish() }
            func look(at record: CaptureRecord) {
                progress?.tick()
                inventory.observe(record)
                if let t = record.time { last = max(last, t) }
                if case .note(let note) = record, let line = notes.take(note) {
                    // Stream errors mean frames the analysis did not see: reported.
                    warnings.append(sets.count > 1 ? "\(path): \(line)" : line)
                }
                linker?.observe(record)
            }
            let analyzerNotes: [String]
            if jobs > 1 {
                let analysis = ShardedAnalysis(options: options, jobs: jobs, firstStep: stepsSoFar, firstOrdinal: clientsSoFar)
                while let record = try source.next() {
                    look(at: record)
                    analysis.feed(record)
                }
                if let line = notes.omittedLine { warnings.append(sets.count > 1 ? "\(path): \(line)" : line) }
                let result = analysis.finish(at: last)
                parts.append(result.builder)
                stepsSoFar = analysis.lastStep
                clientsSoFar += analysis.clientCount
                analyzerNotes = result.notes
                prefix = prefix ?? result.prefix
            } else {
                var analyzer = LiveAnalyzer(options: options)
                while let record = try source.next() {
                    look(at: record)
                    builder.add(analyzer.feed(record))
                }
                if let line = notes.omittedLine { warnings.append(sets.count > 1 ? "\(path): \(line)" : line) }
                analyzer.finish(at: last) { builder.add($0) }
                analyzerNotes = analyzer.notes
                prefix = prefix ?? analyzer.prefix
            }
            // An input without a connection is a broken setup, not a clean result.
            if let message = inventory.noConnectionMessage(path, source: (source as? ReadAheadSource)?.underlying ?? source) { throw UsageError("\(command): \(message)") }
            end = max(end, last)
            // The first input's wall-clock start: with several, times stay relative to their own.
            if i == 0, source.header.startedAt > 0 { startedAt = source.header.startedAt }
            // Each connection's replica: when merging, or when a lone capture names its replica.
            if let fleet = fleetSource {
                replicaOf = { fleet.replica(of: $0).map { fleet.replicas[$0] } }
            } else if sets.count == 1, let name = source.header.replicaName {
                replicaOf = { _ in name }
            }
            warnings += source.warnings.map { sets.count > 1 ? "\(path): \($0)" : $0 }
            warnings += analyzerNotes   // clients analyzed at connection level, said so
        }
        if jobs > 1 { builder = ReportBuilder.merged(consume parts) }
        var report = (consume builder).build(spec: spec, inputs: inputs, grouping: clientKey.description, prefix: prefix,
                                   warnings: warnings, endTime: end,
                                   unchecked: RuleRegistry.unchecked(spec: spec, appSecret: arguments.value("app-secret")),
                                   failOn: failOn, startedAt: sets.count == 1 ? startedAt : nil)
        report.authRequests = linker?.links ?? []
        report.labelReplicas(replicaOf)
        if let output = arguments.value("output") {
            guard write(report, as: format, toFile: output) else {
                throw UsageError("\(command): --output: cannot write '\(output)'")
            }
            Console.out("summary: \(report.summaryLine)\nreport: \(output)\n")
        } else {
            format.render(report) { Console.out($0) }
        }
        return report.exitStatus == 0 ? ExitStatus.success : ExitStatus.failure
    }

    /// `--jobs` by default: the cores this process may run on.
    static var defaultJobs: Int { min(256, max(1, ProcessInfo.processInfo.activeProcessorCount)) }

    /// `--explain RULE`: the rule's severity, whose behaviour it judges, what breaks it, an
    /// example, and the built-in specs that check it.
    static func explain(_ rule: String, command: String) throws -> Int32 {
        guard let type = RuleRegistry.type(for: rule) else {
            let hint = Suggestion.closest(to: rule, in: RuleRegistry.ids).map { " (did you mean '\($0)'?)" } ?? ""
            throw UsageError("\(command): --explain: unknown rule '\(rule)'\(hint); 'faultline specs rules' lists them")
        }
        let specs = SpecLoader.builtInNames.filter { ((try? SpecLoader.load($0))?.rules ?? []).contains(rule) }
        var out = "\(rule)  \(type.severity.rawValue)\(type.party == .server ? " (a server rule)" : "")\n\n"
        let entry = RuleGuide.entry(rule)
        out += "Violated when: \(entry?.meaning ?? type.summary)\n\n"
        if let example = entry?.example { out += "Example: \(example)\n\n" }
        out += "Checked by the built-in specs: \(specs.isEmpty ? "none (only specs that list it)" : specs.joined(separator: ", "))\n"
        out += "More: docs/rules.md in the Faultline repository.\n"
        Console.out(out)
        return ExitStatus.success
    }

    /// Writes the report piece by piece as it is rendered: a large report is never held
    /// whole in memory.
    static func write(_ report: AnalysisReport, as format: ReportFormat, toFile path: String) -> Bool {
        let fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0o644)
        guard fd >= 0 else { return false }
        defer { close(fd) }
        var ok = true
        format.render(report) { piece in
            guard ok else { return }
            var piece = piece
            ok = piece.withUTF8 { FileDescriptorOutput.writeAll(fd, UnsafeRawBufferPointer($0)) == nil }
        }
        return ok
    }
}
