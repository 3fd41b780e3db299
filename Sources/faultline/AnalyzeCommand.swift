import Analysis
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
                       help: "Lifecycle spec: \(SpecLoader.builtInNames.joined(separator: ", ")) (websocket: connection level, any client), or a JSON spec file (default: each client's detected protocol's, else the input's, else bird)."),
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
        try FleetInputs.checkSkew(arguments, command: command)
        let jobs = try arguments.parse("jobs", as: "a number of threads from 1 to 256") { text in
            Int(text).flatMap { (1...256).contains($0) ? $0 : nil }
        } ?? defaultJobs
        let options = AnalysisOptions(
            spec: SpecChoice(named: arguments.all("spec").isEmpty ? nil : arguments.value("spec"), overrides: try SpecOptions.overrides(arguments)),
            clientKey: clientKey, prefix: arguments.value("protocol-prefix"), appSecret: arguments.value("app-secret"),
            jobs: jobs, failOn: failOn, filter: arguments.value("filter"), merge: arguments.flag("merge"),
            maxSkew: try SpecOptions.duration(arguments, "max-skew") ?? 50_000, showsProgress: true, command: command)
        let run = AnalysisRun(inputs: arguments.positionals, options: options) { Console.err(TerminalText.escape($0) + "\n") }
        let report = try run.run()
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
