import CLI
import ControlAPI
import Capture
import Glibc
import Inputs
import Lifecycle
import Transport
import UI
import Vocabulary

/// `faultline ui CAPTURE...`: the proxy's web page over recorded captures and pcaps, for
/// offline work. The inputs are read once, through the same analyzer as `analyze`, into
/// the page's model; the page is then served until Ctrl-C (no actions: nothing is live).
enum UICommand: Command {
    static let spec = CommandSpec(
        name: "ui",
        abstract: "Browse recorded captures and pcaps in the web UI.",
        discussion: """
            Reads every INPUT (a capture, a rotated recording's parts, a pcap or pcapng, compressed
            or not) through the lifecycle analyzer and serves the page 'faultline proxy --ui' serves:
            connections and clients, each client's lifecycle lane, findings with the rules'
            explanations, and frames. Prints 'UI on http://HOST:PORT/' once ready; Ctrl-C stops.
            Several inputs: the connections of the second are numbered from 1000001, of the third
            from 2000001, and so on; client ids get 1/, 2/, ... as in 'faultline analyze'. With
            --merge the inputs are the captures of several replicas of one fleet (proxy --replica),
            read as one session as 'analyze --merge' reads them: a client that reconnects on
            another replica stays one client.
            Security as for the proxy's UI (docs/ui.md): loopback only unless a token is given.

            EXAMPLES:
              faultline ui session.jsonl
              faultline ui session.jsonl.zst traffic.pcapng --listen 127.0.0.1:8090
              faultline ui --merge east-1.jsonl east-2.jsonl east-3.jsonl   (a fleet's replicas, one session)
            """,
        arguments: [ArgumentSpec("input", help: "Captures or pcaps to show.", variadic: true)],
        options: [
            OptionSpec("listen", value: "host:port", help: "Where the page is served (port 0: any free port).", default: "127.0.0.1:8090"),
            OptionSpec("spec", value: "name|file", help: "The lifecycle spec the analyzer checks against.", default: "bird"),
            OptionSpec("ui-token", value: "token", help: "Require this token: open the page once as http://HOST:PORT/?token=TOKEN."),
        ] + FleetInputs.options(merge: "Read the inputs as the replicas of one fleet: one session in wall-clock order (default: each input apart).") + [
            OptionSpec("ui-token-file", value: "file", help: "Read the token from the first line of FILE (default: $\(ControlToken.environmentName))."),
        ])

    static func run(_ arguments: ParsedArguments) throws -> Int32 {
        let command = "faultline ui"
        let inputs = arguments.positionals
        guard !inputs.isEmpty else { throw UsageError("\(command): give at least one capture or pcap") }
        let listenText = arguments.value("listen") ?? "127.0.0.1:8090"
        guard case .success(let listen) = HostPort.parse(listenText) else {
            throw UsageError("\(command): --listen '\(listenText)' is not HOST:PORT (for example 127.0.0.1:8090)")
        }
        let token = try ControlToken.resolve(arguments, flag: "ui-token", command: command)
        let spec: LifecycleSpec
        do { spec = try SpecLoader.load(arguments.value("spec") ?? "bird") } catch { throw UsageError("\(command): --spec: \(error)") }
        let model = UIModel(spec: spec)
        // A fleet's replicas are one session (FleetInputs says its clock corrections);
        // otherwise each input stands alone, a rotated recording's parts as one.
        let merge = arguments.flag("merge")
        try FleetInputs.checkSkew(arguments, command: command)
        let (sets, warnings) = merge ? ([inputs], []) : InputSets.group(inputs)
        for warning in warnings { Console.err("faultline: warning: \(warning)\n") }
        for (i, set) in sets.enumerated() {
            var source: any RecordSource = try merge ? FleetInputs.merged(arguments, command: command) : InputSets.open(set, options: .init())
            var loader = UICaptures(model: model, index: i, count: sets.count)
            var skipped = 0
            while let record = try source.next() { if !loader.feed(record) { skipped += 1 } }
            loader.finish()
            if skipped > 0 {
                Console.err("faultline: warning: \(set[0]): \(skipped) records of connections numbered \(UICaptures.connectionsPerInput) or more are not shown\n")
            }
            for warning in source.warnings { Console.err(TerminalText.escape("faultline: warning: \(set[0]): \(warning)") + "\n") }
        }
        let loop: EventLoop
        do { loop = try EventLoop() } catch { throw UsageError("\(command): \(error)") }
        let ui: UIServer
        do {
            ui = try UIServer.start(loop: loop, host: listen.host, port: listen.port, token: token, model: model, backend: nil)
        } catch {
            loop.close()
            throw UsageError("\(command): --listen \(listenText): \(error)")
        }
        let stop: (Int32) -> Void = { _ in
            ui.close()
            loop.stop()
        }
        do {
            try loop.onSignal(SIGINT, stop)
            try loop.onSignal(SIGTERM, stop)
        } catch {
            loop.close()
            throw UsageError("\(command): \(error)")
        }
        Console.out("UI on http://\(ui.address)/ (\(model.rows.count) connections, \(model.clients.count) clients)\n")
        loop.run()
        loop.close()
        return ExitStatus.success
    }
}
