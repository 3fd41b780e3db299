import CLI
import Capture
import Foundation
import Lifecycle
import Reports

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
            inputs are analysed separately into one report, client ids prefixed by input number.
            Exit status: 0 no error finding, 1 error findings, 2 unusable input or command line.
            """,
        arguments: [ArgumentSpec("input", help: "Captures to analyse, or '-' for standard input.", variadic: true)],
        options: [
            OptionSpec("spec", value: "name|file",
                       help: "Lifecycle spec: bird, agora-rtm, agora-rtm-stream, or a JSON spec file.", default: "bird"),
            OptionSpec("format", value: "format", help: "Report format.", default: "text",
                       choices: ReportFormat.allCases.map(\.rawValue)),
            OptionSpec("output", value: "file", help: "Write the report to FILE instead of standard output (default: stdout)."),
            OptionSpec("app-secret", value: "secret", help: "App secret: verify HMAC auth and sign-in signatures (default: not checked)."),
            OptionSpec("client-key", value: "key",
                       help: "Group connections by header:NAME or query:NAME (default: source IP + User-Agent + path)."),
            OptionSpec("protocol-prefix", value: "prefix", help: "Event prefix, bird or pusher (default: detected from the handshake)."),
            OptionSpec("filter", value: "bpf", help: "BPF filter for pcap input (default: none; ignored for captures)."),
            OptionSpec("tolerance", value: "seconds", help: "Timing tolerance on every delay (default: the spec's, 0.25 for bird)."),
            OptionSpec("immediate-tolerance", value: "seconds", help: "How soon 'immediately' must be (default: the spec's, 0.5 for bird)."),
            OptionSpec("base", value: "seconds", help: "Backoff base of the first phase (default: the spec's, 1 for bird)."),
            OptionSpec("cap", value: "seconds", help: "Backoff cap of the first phase (default: the spec's, 30 for bird)."),
            OptionSpec("activity-timeout", value: "seconds", help: "Activity timeout when the handshake gives none (default: the spec's, 120)."),
            OptionSpec("pong-timeout", value: "seconds", help: "Pong timeout (default: the spec's, 30)."),
            OptionSpec("resubscribe-window", value: "seconds", help: "Window to resubscribe and sign in again (default: the spec's, 10)."),
        ])

    static func run(_ arguments: ParsedArguments) throws -> Int32 {
        let command = arguments.command
        let format = ReportFormat(rawValue: arguments.value("format") ?? "text") ?? .text
        var spec: LifecycleSpec
        do {
            spec = try SpecLoader.load(arguments.value("spec") ?? "bird")
        } catch {
            throw UsageError("\(command): --spec: \(error)")
        }
        spec = try overrides(arguments).apply(to: spec)
        var clientKey = ClientKeyMode.standard
        if let raw = arguments.value("client-key") {
            guard let parsed = ClientKeyMode(parsing: raw) else {
                throw UsageError("\(command): invalid value '\(raw)' for '--client-key': expected header:NAME or query:NAME")
            }
            clientKey = parsed
        }
        let inputs = arguments.positionals
        var builder = ReportBuilder()
        var warnings: [String] = []
        var prefix: String?
        var end: Micros = 0
        for (i, path) in inputs.enumerated() {
            var source = try InputSources.open(path, options: .init(filter: arguments.value("filter")))
            var analyzer = LiveAnalyzer(options: AnalyzerOptions(
                spec: spec, clientKey: clientKey, prefix: arguments.value("protocol-prefix"),
                appSecret: arguments.value("app-secret"), clientIDPrefix: inputs.count > 1 ? "\(i + 1)/" : ""))
            var last: Micros = 0
            var notes = StreamNotes()
            while let record = try source.next() {
                if let t = record.time { last = max(last, t) }
                if case .note(let note) = record, let line = notes.take(note) {
                    // Stream errors mean frames the analysis did not see: reported.
                    warnings.append(inputs.count > 1 ? "\(path): \(line)" : line)
                }
                builder.add(analyzer.feed(record))
            }
            if let line = notes.omittedLine { warnings.append(inputs.count > 1 ? "\(path): \(line)" : line) }
            builder.add(analyzer.finish(at: last))
            end = max(end, last)
            prefix = prefix ?? analyzer.prefix
            warnings += source.warnings.map { inputs.count > 1 ? "\(path): \($0)" : $0 }
        }
        let report = builder.build(spec: spec, inputs: inputs, grouping: clientKey.description, prefix: prefix,
                                   warnings: warnings, endTime: end)
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
            ok = piece.withUTF8 { bytes in
                var offset = 0
                while offset < bytes.count {
                    let n = Glibc.write(fd, bytes.baseAddress! + offset, bytes.count - offset)
                    if n < 0, errno == EINTR { continue }
                    if n <= 0 { return false }
                    offset += n
                }
                return true
            }
        }
        return ok
    }

    static func overrides(_ arguments: ParsedArguments) throws(UsageError) -> SpecOverrides {
        func seconds(_ name: String) throws(UsageError) -> Micros? {
            try arguments.parse(name, as: "seconds (a number >= 0)") { Double($0).flatMap { $0 >= 0 && $0 < 1e9 ? micros(seconds: $0) : nil } }
        }
        var o = SpecOverrides()
        o.tolerance = try seconds("tolerance")
        o.immediateTolerance = try seconds("immediate-tolerance")
        o.base = try seconds("base")
        o.cap = try seconds("cap")
        o.activityTimeout = try seconds("activity-timeout")
        o.pongTimeout = try seconds("pong-timeout")
        o.resubscribeWindow = try seconds("resubscribe-window")
        return o
    }
}
