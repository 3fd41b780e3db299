import CLI
import Capture
import Faults
import Foundation
import Glibc
import Inputs
import ProtocolTable
import Protocols
import Replay
import Vocabulary

/// `faultline replay CAPTURE --listen HOST:PORT | --upstream ws[s]://HOST:PORT[/PATH]`:
/// plays recorded connections back as the server or as the client and reports where the
/// live peer did something else. Wiring only; the replay itself is in the Replay module.
enum ReplayCommand: Command {
    static let spec = CommandSpec(
        name: "replay",
        abstract: "Play a recorded session back, as the server or as the client.",
        discussion: """
            With --listen, Faultline is the server: a live client connects and gets the
            recorded upgrade answer (with a correct Sec-WebSocket-Accept) and the recorded
            server frames, closes, FINs and resets, each sent once the client frames that
            preceded it in the recording have arrived, then after the recorded gap.
            Successive client connections replay successive recorded connections;
            with --all-clients each connection replays the next connection of the
            recorded client with its key (IP, User-Agent, path, as 'analyze' groups).
            With --upstream, Faultline is the client and plays the recorded client frames
            against a live server the same way. Either way, the live peer's frames are
            compared with the recorded ones modulo ignored fields (auth, channel_data) and
            mapped ones (socket_id); differences are reported, grouped by kind and
            event. Peer frames nothing of ours caused are never waited for: those the
            peer sends on its own timer are matched loosely (count and interval, not
            content), those other clients caused are counted, not compared.
            TLS: a wss:// upstream is verified like the proxy's (--upstream-ca,
            --insecure-upstream); --tls-cert and --tls-key serve --listen over TLS.
            An upstream that cannot be reached (connection refused, a name that does not
            resolve, a failed TLS handshake, no answer within --connect-timeout) before any
            connection was made is an unusable run, not a difference.
            Exit status: 0 no differences, 1 differences, 2 unusable input or an
            unreachable upstream.
            """,
        usage: "faultline replay <capture> (--listen <host:port> | --upstream <url>) [options]",
        arguments: [ArgumentSpec("capture", help: "The capture (plain, zstd or gzip; or a pcap) to replay, or '-' for standard input (kept in a temporary file: it is read twice).")],
        options: [
            OptionSpec("listen", value: "host:port", help: "Replay as the server, listening here (port 0: any free port)."),
            OptionSpec("upstream", value: "url", help: "Replay as the client against ws://HOST:PORT[/PATH], or wss://... for TLS (PATH replaces the recorded target)."),
        ] + TLSOptions.upstream + TLSOptions.listener + [TLSOptions.keyLog] + [
            OptionSpec("conn", value: "id", help: "Replay only this connection."),
            OptionSpec("client", value: "client", help: "Replay this client's connections: its id or its key as 'faultline analyze' prints them (client-2, or '127.0.0.1 | agent | /path'), or a part of the key only one client has."),
            OptionSpec("all-clients", help: "As the server: serve every recorded client at once, each live connection matched to a recorded client by its key."),
            OptionSpec("clients", value: "n", help: "As the client: run this many copies at once.", default: "1"),
            OptionSpec("speed", value: "x", help: "Time factor from 0.01 to 10000 (2 = twice as fast) or 'max' (no waiting).", default: "1"),
            OptionSpec("max-gap", value: "duration", help: "Cap every recorded idle gap at this (500ms, 1s); default: none."),
            OptionSpec("connect-timeout", value: "duration", help: "As the client: how long the TCP connect, the TLS handshake and the upgrade answer may each take.", default: "10s"),
            OptionSpec("patience", value: "duration", help: "How long past its recorded time a peer frame may come before it is missing.", default: "5s"),
            OptionSpec("ignore-field", value: "name", help: "Also ignore this JSON field when comparing (repeatable).", repeatable: true),
            OptionSpec("ignore-event", value: "name", help: "Drop the peer's frames with this event name (as the report names it) from the comparison (repeatable).", repeatable: true),
            OptionSpec("app-secret", value: "secret", help: "As the client: re-sign private/presence subscriptions and sign-ins for the live socket_id with this app secret (default: send the recorded signatures)."),
            OptionSpec("strict", help: "Stop at the first difference."),
            OptionSpec("format", value: "format", help: "Report format.", default: "text", choices: ["text", "json"]),
            OptionSpec("output", value: "file", help: "Write the report here instead of standard output."),
        ])

    static func run(_ arguments: ParsedArguments) throws -> Int32 {
        let command = arguments.command
        let path = arguments.positionals[0]
        let listen = arguments.value("listen"), upstream = arguments.value("upstream")
        guard (listen == nil) != (upstream == nil) else {
            throw UsageError("\(command): give exactly one of '--listen HOST:PORT' (replay as the server) or '--upstream URL' (replay as the client)")
        }
        let mode: ReplayRunner.Mode
        var secureUpstream = false
        let copies = try arguments.parse("clients", as: "a whole number from 1 to 10000") { Int($0).flatMap { (1...10_000).contains($0) ? $0 : nil } } ?? 1
        if let listen {
            guard case .success(let address) = HostPort.parse(listen) else {
                throw UsageError("\(command): invalid value '\(listen)' for '--listen': expected HOST:PORT, as in 127.0.0.1:8080")
            }
            let (host, port) = (address.host, address.port)
            if copies != 1 { throw UsageError("\(command): '--clients' applies to '--upstream' only") }
            mode = .server(host: host, port: port)
        } else {
            let url = try parseURL(upstream!, command: command)
            mode = .client(host: url.host, port: url.port, target: url.target, copies: copies)
            secureUpstream = url.secure
        }
        let tls = try TLSOptions.contexts(arguments, command: command, secureUpstream: secureUpstream, listens: listen != nil)
        var timing = ReplayTiming()
        if let speed = arguments.value("speed") {
            switch ReplayTiming.speed(parsing: speed) {
            case .success(let factor): timing.speed = factor
            case .failure(let error): throw UsageError("\(command): invalid value '\(speed)' for '--speed': \(error)")
            }
        }
        timing.maxGap = try duration(arguments, "max-gap")
        timing.patience = try duration(arguments, "patience") ?? 5_000_000
        let selection: ReplaySelection
        let allClients = arguments.flag("all-clients")
        if allClients && listen == nil { throw UsageError("\(command): '--all-clients' applies to '--listen' only") }
        switch (arguments.value("conn"), arguments.value("client")) {
        case _ where allClients && (arguments.value("conn") != nil || arguments.value("client") != nil):
            throw UsageError("\(command): give at most one of '--conn', '--client' and '--all-clients'")
        case _ where allClients:
            selection = .allClients
        case (.some, .some):
            throw UsageError("\(command): give at most one of '--conn' and '--client'")
        case (.some(let id), nil):
            guard let conn = Int(id), conn >= 1 else {
                throw UsageError("\(command): invalid value '\(id)' for '--conn': expected a connection id (1, 2, ...)")
            }
            selection = .connection(conn)
        case (nil, .some(let key)):
            selection = .client(key)
        case (nil, nil):
            selection = .firstClient
        }

        let recordings: [RecordedConnection]
        let name = path == "-" ? "<stdin>" : path
        // A replay reads its capture twice: standard input is kept in a temporary file first.
        let readable = path == "-" ? try StandardInputSpool.spool(command: command) : path
        do {
            recordings = try ReplayLoader.load({ try InputSources.open(readable) }, selection: selection)
        } catch let error as ReplayInputError {
            throw UsageError("\(name): \(error.message)")
        } catch where path == "-" {
            // Messages name the file they read, here the temporary copy: name the input instead.
            let message = (error as? UsageError)?.message ?? "\(error)"
            throw UsageError(message.replacingOccurrences(of: readable, with: name))
        }
        guard !recordings.isEmpty else { throw UsageError("\(name): the selection holds no connections") }

        // Each recorded connection is replayed with the entry its own upgrade and first
        // messages choose, else the one of the spec the capture was recorded under, else the
        // one detection chooses on all the selected connections.
        let recordedSpec = try? InputSources.open(readable).header.spec
        let wire = ReplayProtocol.recorded(under: recordedSpec) ?? ReplayProtocol.detect(in: recordings)
        let rules = MatchRules(wire.volatileFields).ignoring(arguments.all("ignore-field"))
        var options = ReplayRunner.Options(mode: mode, wire: wire, timing: timing, rules: rules, strict: arguments.flag("strict"),
                                           signer: arguments.value("app-secret").map { AuthSigner(secret: $0, wire: wire.instance()) },
                                           upstreamTLS: tls.upstream, listenerTLS: tls.listener)
        options.ignoredEvents = Set(arguments.all("ignore-event"))
        options.wires = ReplayProtocol.detectEach(in: recordings, shared: wire)
        options.allClients = allClients
        if let timeout = try duration(arguments, "connect-timeout") {
            guard timeout > 0 else { throw UsageError("\(command): invalid value '0' for '--connect-timeout': expected a duration above 0") }
            options.connectTimeout = timeout
        }
        TLSOptions.warnIfUnverified(tls.upstream, command: command)
        let runner = try ReplayRunner(recordings: recordings, options: options)
        runner.onListening = { address in Console.out("listening on \(address)\n") }
        let deviations: [Deviation]
        do {
            deviations = try runner.run()
        } catch let unreachable as ReplayUnreachable {
            throw UsageError("\(command): cannot reach \(upstream ?? "the upstream"): \(unreachable.reason); nothing was replayed")
        } catch {
            throw UsageError("\(command): \(error)")
        }
        var report = ReplayReport(capture: path, role: listen != nil ? "server" : "client",
                                  connectionsRecorded: recordings.count, connectionsReplayed: runner.connectionsPlayed,
                                  deviations: deviations, stoppedStrictly: runner.stoppedStrictly, copies: copies)
        report.loose = runner.looseTallies
        report.showsClients = allClients
        let rendered = arguments.value("format") == "json" ? report.json : report.text
        if let output = arguments.value("output") {
            try writeFile(output, rendered, command: command)
        } else {
            Console.out(rendered)
        }
        return deviations.isEmpty ? ExitStatus.success : ExitStatus.failure
    }

    static func duration(_ arguments: ParsedArguments, _ name: String) throws -> Int64? {
        guard let text = arguments.value(name) else { return nil }
        // One duration syntax on the command line: a bare number is seconds, as for sim,
        // demo and analyze; 500ms, 1.5s, 2m say their unit.
        if let seconds = Double(text), seconds >= 0, seconds < 1e9 { return Int64((seconds * 1_000_000).rounded()) }
        switch FaultDuration.parse(text) {
        case .success(let micros): return micros
        case .failure(let error): throw UsageError("\(arguments.command): invalid value '\(text)' for '--\(name)': \(error)")
        }
    }

    /// ws[s]://HOST[:PORT][/PATH]: the host, port (80 by default, 443 for wss) and target
    /// (nil: as recorded), and whether it is wss.
    static func parseURL(_ text: String, command: String) throws -> (host: String, port: Int, target: String?, secure: Bool) {
        let bad = { (why: String) in UsageError("\(command): invalid value '\(text)' for '--upstream': \(why)") }
        let url: WebSocketURL
        switch WebSocketURL.parse(text) {
        case .success(let parsed): url = parsed
        case .failure(.notWebSocketURL): throw bad("expected ws[s]://HOST:PORT[/PATH]")
        case .failure(.badAuthority): throw bad("bad port")
        case .failure(let error): throw bad(error.description)
        }
        guard url.port >= 1 else { throw bad("port 0 cannot be connected to") }
        var target: String? = url.target
        if target == "" || target == "/" { target = nil }
        if target?.hasPrefix("?") == true { target = "/" + target! }
        return (url.host, url.port, target, url.secure)
    }

    static func writeFile(_ path: String, _ text: String, command: String) throws {
        let fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0o644)
        guard fd >= 0 else { throw UsageError("\(path): cannot create: \(String(cString: strerror(errno)))") }
        defer { close(fd) }
        Console.write(fd: fd, text)
    }
}
