import Analysis
import CLI
import Demo
import Capture
import Foundation
import Inputs
import Lifecycle
import Reports
import Sim
import Vocabulary

/// `faultline demo`: everything on loopback in one process and one event loop: the sim
/// server, the recording proxy with faults scoped to single clients, several sim clients
/// (one with a bug), for a bounded time; then the analysis of the recording (text report
/// on standard output, HTML report written beside the capture) and a verdict on whether
/// every part of the scenario happened. Exit 0 when it ran as designed, 1 when something
/// that should have happened did not, 2 for a bad command line.
enum DemoCommand: Command {
    static let spec = CommandSpec(
        name: "demo",
        abstract: "Run the simulator server, the recording proxy with faults and sim clients, then analyse the recording.",
        discussion: """
            On loopback, in one process: on client 1's first connection pongs are stalled
            (activity timeout rewritten to 2 s): it must close with 4201 and reconnect at
            once; client 2 is
            terminated with 4009: failed, no retry; client 3's connections are dropped (FIN)
            and client 4's reset (RST): unavailable, backoff, reconnect; client 5 runs with
            --bug reuse-auth and is dropped: the analyzer must report channels.stale-auth.
            Faults are scoped with client=(client N), a substring of each sim client's
            User-Agent. Progress is printed as it happens; at the end the text report, the
            paths of the capture and the HTML report, and the verdict. The recording is
            checked with the bird spec and the clients' 1 s pong timeout and a 3 s
            resubscribe window (the analyze command line is printed).
            """,
        options: [
            OptionSpec("duration", value: "duration", help: "How long the clients run (at least 10s).", default: "30s"),
            OptionSpec("out", value: "dir", help: "Directory for capture.jsonl and report.html (default: a fresh ./faultline-demo-TIME)."),
            OptionSpec("seed", value: "n", help: "Seed for the peers and the proxy, so runs repeat.", default: "1"),
            OptionSpec("clients", value: "n", help: "Sim clients (at least 5; the ones after 5 are left alone).", default: "5"),
        ])

    static func run(_ arguments: ParsedArguments) throws -> Int32 {
        let command = arguments.command
        let duration = try arguments.parse("duration", as: "a duration of at least 10s, such as 12s or 1m") {
            SimDuration.parse($0).flatMap { $0 >= 10 * SimDuration.second ? $0 : nil }
        } ?? 30 * SimDuration.second
        let seed = try arguments.parse("seed", as: "a whole number from 0 to 2^64-1") { UInt64($0) } ?? 1
        let clients = try arguments.parse("clients", as: "a number from \(DemoScenario.minimumClients) to 1000") {
            Int($0).flatMap { (DemoScenario.minimumClients...1000).contains($0) ? $0 : nil }
        } ?? DemoScenario.minimumClients
        let directory = arguments.value("out") ?? defaultDirectory()
        do {
            try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
        } catch {
            throw UsageError("\(command): --out: cannot create directory '\(directory)': \(error.localizedDescription)")
        }
        let capture = (directory as NSString).appendingPathComponent("capture.jsonl")
        let html = (directory as NSString).appendingPathComponent("report.html")

        let scenario = DemoScenario(clients: clients)
        let demo = DemoRun(scenario: scenario, duration: duration, seed: seed, capturePath: capture)
        do {
            try demo.run()
        } catch {
            Console.err("\(command): \(error)\n")
            return ExitStatus.failure
        }

        Console.out("\ndemo: analysis of the recording (\(DemoScenario.analyzeCommand(capture))):\n\n")
        let report = try analyze(capture, spec: scenario.spec())
        Console.out(ReportFormat.text.render(report))
        guard FileManager.default.createFile(atPath: html, contents: Data(ReportFormat.html.render(report).utf8)) else {
            Console.err("\(command): cannot write '\(html)'\n")
            return ExitStatus.failure
        }
        Console.out("\ncapture: \(capture)\nHTML report: \(html)\n\n")

        let checks = DemoChecks.evaluate(changes: demo.stateChanges, report: report)
        for check in checks {
            Console.out("\(check.passed ? "ok  " : "FAIL") \(check.name): \(check.detail)\n")
        }
        if checks.allSatisfy(\.passed) {
            Console.out("demo: ran as designed: every fault had its effect and the analyzer caught the bug\n")
            return ExitStatus.success
        }
        if demo.interrupted { Console.out("demo: interrupted by a signal before --duration had passed\n") }
        Console.out("demo: did not run as designed: \(checks.filter { !$0.passed }.map(\.name).joined(separator: "; "))\n")
        return ExitStatus.failure
    }

    /// The recording analysed exactly as `faultline analyze --spec` would, with the demo's spec.
    static func analyze(_ path: String, spec: LifecycleSpec) throws -> AnalysisReport {
        try AnalysisRun(inputs: [path], options: AnalysisOptions(spec: SpecChoice(loaded: spec), command: "faultline demo")).run()
    }

    /// ./faultline-demo-20261129-221500 (UTC), made unique if it exists.
    static func defaultDirectory() -> String {
        let formatter = DateFormatter()
        formatter.dateFormat = "yyyyMMdd-HHmmss"
        formatter.timeZone = TimeZone(identifier: "UTC")
        let base = "faultline-demo-\(formatter.string(from: Date()))"
        var name = base
        var n = 2
        while FileManager.default.fileExists(atPath: name) {
            name = "\(base)-\(n)"
            n += 1
        }
        return name
    }
}
