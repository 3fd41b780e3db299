import Capture
import CLI
import ControlAPI
import Faults
import Glibc
import Lifecycle
import ProtocolTable
import ProxyShell
import Reports
import Transport
import UI
import Vocabulary

/// `faultline proxy`: the recording, fault-injecting WebSocket proxy. This file turns flags
/// into `ProxySettings` (rejecting anything unusable before a socket opens) and runs a
/// `ProxyServer` on an event loop until SIGINT or SIGTERM.
enum ProxyCommand: Command {
    static let spec = CommandSpec(
        name: "proxy",
        abstract: "Relay, record and break WebSocket connections between a client and its server.",
        discussion: """
            Listens on --listen, forwards each client's WebSocket upgrade to --upstream and
            relays frames both ways one by one, unchanged (client frames re-masked), recording
            every upgrade, frame, close and TCP end to --record. Prints 'listening on HOST:PORT'
            once ready. SIGINT or SIGTERM stops accepting, completes the capture and exits 0
            (1 with --fail-on error|warning when the live check saw such a finding).
            With --route, each request goes to the upstream of its Host and path. With
            --forward it is instead an HTTP proxy for any host (CONNECT and absolute URLs),
            intercepting TLS with --tls-ca; see docs/forward-proxy.md. The spec options (--spec,
            --pong-timeout ...) are written into the capture's header, and analyze judges the
            capture by them.

            Fault rules (--fault, repeatable, or --faults FILE with one rule a line):
            \(FaultRegistry.helpLines.joined(separator: "\n"))
            Triggers and scope, combinable: after=DUR at=DUR on=EVENT frames=N conn=N[-M]
            every=N client=KEY host=NAME path=PREFIX prob=P; for=DUR ends any kind. Example: close:4009,after=30s,reason=terminated
            """,
        options: [
            OptionSpec("listen", value: "host:port", help: "Where clients connect (port 0: any free port; the real one is printed).", required: true),
            OptionSpec("upstream", value: "url", help: "The real server: ws://HOST[:PORT][/PATH], or wss://... for TLS (verified against the system trust store); needed unless --forward or --route gives the upstreams."),
        ] + TLSOptions.upstream + TLSOptions.listener + [
            OptionSpec("keylog", value: "file", help: "Append TLS secrets of both legs in NSS key log format (for Wireshark)."),
            OptionSpec("record", value: "file", help: "Write a capture (JSON Lines, format v1) of everything relayed; a name ending in .zst is zstd-compressed; an existing file is refused."),
            OptionSpec("rotate", value: "size|duration",
                       help: "Start a new --record file at this size (100M, 2G) or age (1h, 10m): FILE.jsonl.zst is written as FILE.0001.jsonl.zst, FILE.0002.jsonl.zst, ..."),
            OptionSpec("overwrite", help: "Let --record replace an existing file."),
            OptionSpec("fault", value: "rule", help: "A fault rule; repeatable.", repeatable: true),
            OptionSpec("faults", value: "file", help: "A fault plan: one rule a line, '#' comments."),
            OptionSpec("seed", value: "n", help: "Seed for prob= and jitter=, so runs repeat exactly.", default: "0"),
            OptionSpec("replica", value: "name",
                       help: "This proxy's name in a fleet, written to the capture header and the metrics; 'analyze --merge' shows it (default: none; the host name and listen address are always written)."),
            OptionSpec("clock-offset", value: "duration",
                       help: "Testing only: shift the wall clock written to the capture header by this much (30ms, -30ms), as a replica with a skewed clock would (default: 0)."),
            OptionSpec("strict", help: "Fail a connection on an RFC 6455 violation instead of relaying it."),
            OptionSpec("max-payload", value: "bytes", help: "Largest frame payload relayed (K, M, G suffixes).", default: "64M"),
            OptionSpec("max-connections", value: "n", help: "Open connections at most; more get HTTP 503.", default: "10000"),
            OptionSpec("max-pending", value: "n",
                       help: "Connections still in their handshake at most (capped at --max-connections); when full, or when every slot is taken, the oldest pending one is closed to admit a new client.", default: "1024"),
            OptionSpec("handshake-timeout", value: "duration",
                       help: "Longest time from accept to an open WebSocket (request, upstream connect and response); slower connections are closed (408 or 504).", default: "10s"),
            OptionSpec("live", help: "Print connection lifecycle events on standard error."),
            OptionSpec("spec", value: "name|file",
                       help: "Check lifecycles live against a spec: \(SpecLoader.builtInNames.joined(separator: ", ")) or a file; findings on stderr (with --live also state changes; default with --live: each client's detected protocol's, else the first's, else bird)."),
            OptionSpec("fail-on", value: "severity",
                       help: "With --spec or --live: exit 1 at shutdown if a finding this severe or worse was seen (error, warning); never keeps exit 0.",
                       default: "never", choices: FailOn.allCases.map(\.rawValue)),
        ] + SpecOptions.overrides + [
            OptionSpec("verbose", short: "v", help: "Also print a debug line for every frame and note."),
            OptionSpec("toxiproxy-api", value: "host:port",
                       help: "Serve a toxiproxy-compatible REST API here (loopback only): its clients create WebSocket-aware, recorded proxies at run time, listening on loopback unless --control-allow-remote."),
        ] + ProxyControl.options + ProxyUI.options + ForwardOptions.options + [ReverseRouteOptions.option])

    static func run(_ arguments: ParsedArguments) throws -> Int32 {
        var settings = try settings(from: arguments)
        let live = LiveView(lifecycle: arguments.flag("live"), verbose: arguments.flag("verbose"))
        let analysis = try liveAnalysis(arguments)
        // --spec names the relay's protocol entry; without it each connection detects its own.
        if let spec = analysis?.spec, !arguments.all("spec").isEmpty {
            settings.protocolChoice = .entry(ProtocolTable.standard.entry(for: spec.events.rawValue, prefix: spec.prefix))
        }
        let loop: EventLoop
        do { loop = try EventLoop() } catch { throw UsageError("faultline proxy: \(error)") }
        let server = ProxyServer(loop: loop, settings: settings, live: live)
        analysis?.attach(to: server)
        let address: String
        do {
            address = try server.start()
        } catch {
            loop.close()
            throw UsageError("faultline proxy: \(error)")
        }
        // The control API (--control) shares the proxy's loop: it reads and changes the
        // proxy's state on the thread that owns it.
        let control: ControlServer?
        let ui: UIServer?
        do {
            control = try ProxyControl.start(arguments, loop: loop, backend: server)
            // --ui: the web UI, on the same loop, acting through the same contract.
            ui = try analysis.flatMap { try ProxyUI.start(arguments, loop: loop, server: server, analysis: $0) }
        } catch {
            server.stop()
            loop.close()
            throw error
        }
        // --toxiproxy-api: toxiproxy's clients create more proxies on the same loop.
        var toxiproxy: (host: ToxiproxyHost, api: ControlServer)?
        if let text = arguments.value("toxiproxy-api") {
            guard case .success(let address) = HostPort.parse(text) else {
                server.stop()
                loop.close()
                throw UsageError("faultline proxy: --toxiproxy-api '\(text)' is not HOST:PORT (for example 127.0.0.1:8474)")
            }
            let proxies = ToxiproxyHost(loop: loop, base: settings)
            do {
                toxiproxy = (proxies, try ControlServer.startToxiproxy(loop: loop, host: address.host, port: address.port,
                                                                        allowRemoteListens: arguments.flag("control-allow-remote"),
                                                                        backend: proxies))
            } catch {
                control?.close()
                server.stop()
                loop.close()
                throw UsageError("faultline proxy: --toxiproxy-api \(text): \(error)")
            }
        }
        let shutdown: (Int32) -> Void = { _ in
            toxiproxy?.api.close()
            toxiproxy?.host.stopAll()
            control?.close()
            ui?.close()
            server.stop()
            analysis?.finish(at: server.now)
            loop.stop()
        }
        do {
            try loop.onSignal(SIGINT, shutdown)
            try loop.onSignal(SIGTERM, shutdown)
        } catch {
            server.stop()
            loop.close()
            throw UsageError("faultline proxy: \(error)")
        }
        TLSOptions.warnIfUnverified(settings.upstreamTLS, command: "faultline proxy")
        Console.out("listening on \(address)\n")
        if let control { Console.out("control API on http://\(control.address)\n") }
        if let ui { Console.out("UI on http://\(ui.address)/\n") }
        if let toxiproxy { Console.out("toxiproxy API on http://\(toxiproxy.api.address)\n") }
        loop.run()
        toxiproxy?.host.stopAll()
        server.stop()
        analysis?.finish(at: server.now)
        loop.close()
        Console.out(shutdownSummary(server) + "\n")
        let failOn = FailOn(rawValue: arguments.value("fail-on") ?? "never") ?? .never
        return analysis?.exitStatus(failOn: failOn) == 1 ? ExitStatus.failure : ExitStatus.success
    }

    /// "stopped after 12.301 s: 3 connections, 41 frames (20 from clients, 21 from the
    /// server), 2 faults fired; capture session.jsonl (18.2 KB)".
    static func shutdownSummary(_ server: ProxyServer) -> String {
        let m = server.metrics()
        let frames = m.framesClientToServer + m.framesServerToClient
        var line = "stopped after \(FrameLine.seconds(server.now)) s: \(m.connectionsTotal) connection\(m.connectionsTotal == 1 ? "" : "s"), "
            + "\(frames) frame\(frames == 1 ? "" : "s") (\(m.framesClientToServer) from clients, \(m.framesServerToClient) from the server), "
            + "\(server.faultsFired) fault\(server.faultsFired == 1 ? "" : "s") fired"
        if let path = server.settings.recordPath {
            line += "; capture \(server.captureTotals?.description ?? "\(path) (0 bytes)")"
        } else {
            line += "; nothing recorded (no --record)"
        }
        return line
    }

    /// Every flag checked and combined; the first unusable one is a `UsageError` naming it.
    static func settings(from arguments: ParsedArguments) throws(UsageError) -> ProxySettings {
        let command = "faultline proxy"
        let listenText = try arguments.required("listen")
        let listen: HostPort
        switch HostPort.parse(listenText) {
        case .success(let value): listen = value
        case .failure(let error): throw UsageError("\(command): --listen \(error)")
        }
        let forward = try ForwardOptions.settings(from: arguments, command: command)
        let upstream: UpstreamURL
        let routes = try ReverseRouteOptions.parse(arguments, command: command, forward: forward != nil)
        let needsUpstream = forward == nil && (routes.isEmpty || arguments.value("upstream") != nil)
        switch needsUpstream ? UpstreamURL.parse(try arguments.required("upstream")) : .success(ForwardOptions.noUpstream) {
        case .success(let value): upstream = value
        case .failure(let error): throw UsageError("\(command): --upstream \(error)")
        }
        var settings = ProxySettings(listen: listen, upstream: upstream)
        settings.forward = forward
        settings.routes = routes
        settings.routes.hasDefault = needsUpstream
        settings.recordPath = arguments.value("record")
        if settings.recordPath == "" { throw UsageError("\(command): --record needs a file name") }
        settings.overwriteRecord = arguments.flag("overwrite")
        settings.recordRotation = try arguments.parse("rotate", as: CaptureRotation.syntax) { CaptureRotation.parse($0) }
        if settings.recordRotation != nil, settings.recordPath == nil { throw UsageError("\(command): --rotate needs --record FILE") }
        if let path = settings.recordPath.map({ settings.recordRotation == nil ? $0 : CaptureRotation.partPath($0, part: 1) }),
           !settings.overwriteRecord, CaptureWriter.isRegularFile(path) {
            throw UsageError("\(command): --record \(path): the file exists; not overwriting a capture (pass --overwrite to replace it, or choose another name)")
        }
        settings.seed = try arguments.parse("seed", as: "a whole number from 0 to 2^64-1") { UInt64($0) } ?? 0
        settings.strict = arguments.flag("strict")
        if let name = arguments.value("replica") {
            guard !name.isEmpty, name.count <= 128, !name.unicodeScalars.contains(where: { $0.properties.generalCategory == .control }) else {
                throw UsageError("\(command): --replica: expected a name of 1 to 128 printable characters")
            }
            settings.replica = name
        }
        settings.clockOffset = try arguments.parse("clock-offset", as: "a duration from -1h to 1h, such as 30ms or -30ms") { text in
            let negative = text.hasPrefix("-")
            guard case .success(let micros) = FaultDuration.parse(negative ? String(text.dropFirst()) : text),
                  micros <= 3_600_000_000 else { return nil }
            return negative ? -micros : micros
        } ?? 0
        settings.maxPayload = try arguments.parse("max-payload", as: "a byte count from 125 to 2G, such as 65536, 512K or 64M") {
            parseBytes($0).flatMap { (125...(2 << 30)).contains($0) ? $0 : nil }
        } ?? settings.maxPayload
        settings.maxConnections = try arguments.parse("max-connections", as: "a whole number from 1 to 1000000") {
            Int($0).flatMap { (1...1_000_000).contains($0) ? $0 : nil }
        } ?? settings.maxConnections
        settings.maxPending = try arguments.parse("max-pending", as: "a whole number from 1 to 1000000") {
            Int($0).flatMap { (1...1_000_000).contains($0) ? $0 : nil }
        } ?? settings.maxPending
        settings.handshakeTimeout = try arguments.parse("handshake-timeout", as: "a duration from 100ms to 1h, such as 10s or 500ms") {
            guard case .success(let micros) = FaultDuration.parse($0), (100_000...3_600_000_000).contains(micros) else { return nil }
            return micros
        } ?? settings.handshakeTimeout

        var rules: [FaultRule] = []
        for text in arguments.all("fault") {
            do { rules.append(try FaultRule.parse(text)) } catch { throw UsageError("\(command): --fault \(error)") }
        }
        if let planPath = arguments.value("faults") {
            let text: String
            do { text = try SmallTextFile.read(planPath) } catch { throw UsageError("\(command): --faults \(error)") }
            do { rules += try FaultPlan.parse(text, name: planPath).rules } catch { throw UsageError("\(command): --faults \(error)") }
        }
        settings.faultRules = rules
        try configureTLS(&settings, from: arguments)

        // --live / --spec: see `liveAnalysis(_:)`, run beside the live view.
        // Rules may arrive later through the control API: every session consults the engine.
        let controlled = try ProxyControl.check(arguments, command: command)
        let watched = try ProxyUI.address(arguments, command: command) != nil
        settings.faultsAlwaysOn = controlled || watched
        // The spec options go into the capture's header, so that analyze judges it alike.
        settings.recordedSpec = try SpecOptions.recorded(arguments)
        return settings
    }

    /// `--upstream-ca`, `--insecure-upstream`, `--tls-cert`/`--tls-key`, `--keylog`: the TLS
    /// contexts, with every file read now so a bad one stops the proxy before it listens.
    static func configureTLS(_ settings: inout ProxySettings, from arguments: ParsedArguments) throws(UsageError) {
        let contexts = try TLSOptions.contexts(arguments, command: "faultline proxy",
                                               secureUpstream: settings.upstream.secure || settings.forward != nil
                                                   || settings.routes.upstreams.contains(where: \.secure),
                                               listens: settings.forward == nil)
        settings.upstreamTLS = contexts.upstream
        settings.listenerTLS = contexts.listener
    }

    /// The live lifecycle check: with `--spec` (findings only, or everything with `--live`),
    /// or with `--live` or `--ui` alone against the spec the protocol table's detection
    /// chooses, as `analyze` would on the capture (the default spec `bird` when spec values
    /// such as `--pong-timeout` are given without `--spec`). Nil when none is given.
    static func liveAnalysis(_ arguments: ParsedArguments) throws(UsageError) -> LiveAnalysis? {
        let live = arguments.flag("live")
        guard let name = arguments.value("spec") ?? (live || arguments.value("ui") != nil ? SpecOptions.defaultSpec : nil) else { return nil }
        let overrides = try SpecOptions.overrides(arguments)
        let spec = try overrides.apply(to: SpecOptions.load(name, arguments))
        // Neither --spec nor a spec value: the spec is detected, as analyze detects it.
        guard arguments.all("spec").isEmpty && overrides.recorded.isEmpty else {
            return LiveAnalysis(spec: spec, transitions: live)
        }
        return LiveAnalysis(detecting: spec, transitions: live) { name in try? SpecLoader.load(name) }
    }

    /// "65536", "512K", "64M", "1G" (powers of 1024).
    static func parseBytes(_ text: String) -> Int? {
        let multipliers: [Character: Int] = ["K": 1 << 10, "M": 1 << 20, "G": 1 << 30]
        guard let last = text.uppercased().last else { return nil }
        if let multiplier = multipliers[last] {
            return Int(text.dropLast()).flatMap { $0 >= 0 && $0 <= Int.max / multiplier ? $0 * multiplier : nil }
        }
        return Int(text).flatMap { $0 >= 0 ? $0 : nil }
    }
}
