import CLI
import Glibc
import Sim
import Transport
import Vocabulary
import WebSocket

/// `faultline sim server` and `faultline sim client`: the simulator peers, wired to the
/// command line. The machines and runners live in the Sim module; this file only reads
/// options and starts a loop.
enum SimCommands {
    static let group = CommandGroup(
        spec: CommandSpec(
            name: "sim",
            abstract: "Run the simulator server or the reference client (Bird Realtime / Pusher protocol).",
            subcommands: [SimServerCLI.spec, SimClientCLI.spec]),
        commands: [SimServerCLI.self, SimClientCLI.self])

    /// `--prefix`: 1 to 32 ASCII letters, digits and '-' (a '_' or ':' would blur the
    /// `PREFIX_internal:` and `PREFIX:` event names).
    static func prefix(_ arguments: ParsedArguments) throws(UsageError) -> String {
        try arguments.parse("prefix", as: "1 to 32 letters, digits and '-', such as bird, pusher or acme") { text in
            let allowed = text.utf8.allSatisfy { byte in
                (0x30...0x39).contains(byte) || (0x41...0x5A).contains(byte) || (0x61...0x7A).contains(byte) || byte == 0x2D
            }
            return allowed && (1...32).contains(text.utf8.count) ? text : nil
        } ?? "bird"
    }

    static func duration(_ arguments: ParsedArguments, _ name: String) throws(UsageError) -> SimMicros? {
        try arguments.parse(name, as: "a duration such as 500ms, 2s or 1m", SimDuration.parse)
    }

    /// A duration of 1 ms to one day (engine.io's ping times, announced in whole milliseconds).
    static func positiveDuration(_ arguments: ParsedArguments, _ name: String) throws(UsageError) -> SimMicros? {
        try arguments.parse(name, as: "a duration of 1ms to 1d such as 500ms or 25s") { text in
            SimDuration.parse(text).flatMap { (SimDuration.millisecond...86_400 * SimDuration.second).contains($0) ? $0 : nil }
        }
    }

    static func closeCode(_ arguments: ParsedArguments, _ name: String) throws(UsageError) -> UInt16? {
        try arguments.parse(name, as: "a close code in 1000-4999 that may be sent (not 1005, 1006, 1015)") { text in
            UInt16(text).flatMap { (1000...4999).contains($0) && CloseCode($0).isSendable ? $0 : nil }
        }
    }

    static func seed(_ arguments: ParsedArguments) throws(UsageError) -> UInt64 {
        if let seed = try arguments.parse("seed", as: "an unsigned integer", { UInt64($0) }) { return seed }
        var random = SystemRandomNumberGenerator()
        return random.next() % 1_000_000
    }

    /// Runs the loop until SIGINT, SIGTERM or `duration`; `finish` runs once, first, and
    /// gets `grace` for close frames to go out before the loop stops; then `cleanup` runs
    /// on the stopped loop, before it is closed.
    static func run(_ loop: EventLoop, duration: SimMicros?, grace: Int64, finish: @escaping () -> Void,
                    cleanup: () -> Void) throws {
        let stopper = Stopper(loop: loop, grace: grace, finish: finish)
        // A parent (a test runner, a shell script) may start us with these blocked.
        var signals = sigset_t()
        sigemptyset(&signals)
        sigaddset(&signals, SIGINT)
        sigaddset(&signals, SIGTERM)
        pthread_sigmask(SIG_UNBLOCK, &signals, nil)
        try loop.onSignal(SIGINT) { _ in stopper.stop() }
        try loop.onSignal(SIGTERM) { _ in stopper.stop() }
        if let duration { loop.schedule(after: duration) { stopper.stop() } }
        loop.run()
        cleanup()
        loop.close()
    }
}

/// Stops a loop once, after letting `finish` start its goodbyes.
private final class Stopper {
    let loop: EventLoop
    let grace: Int64
    var finish: (() -> Void)?

    init(loop: EventLoop, grace: Int64, finish: @escaping () -> Void) {
        self.loop = loop
        self.grace = grace
        self.finish = finish
    }

    func stop() {
        guard let finish else { return }
        self.finish = nil
        finish()
        loop.schedule(after: grace) { [loop] in loop.stop() }
    }
}

enum SimServerCLI: Command {
    static let spec = CommandSpec(
        name: "server",
        abstract: "Run a Bird Realtime server for clients to connect to.",
        discussion: """
            Speaks the Bird wire protocol (docs/protocol.md): handshake with socket_id and activity_timeout, ping/pong,
            public, private- and presence- channels with HMAC-SHA256 auth checked against
            --app-secret, subscription errors, client events relayed to the channel's other
            subscribers, sign-in, and a server event on every subscribed channel each
            --event-interval. Prints 'listening on HOST:PORT' once it accepts connections.
            """,
        options: [
            OptionSpec("listen", value: "host:port", help: "Address to listen on; port 0 picks a free port.", required: true),
            OptionSpec("protocol", value: "name", help: "Protocol to serve: \(SimServerProtocols.names.joined(separator: ", ")).", default: "bird"),
            OptionSpec("app-key", value: "key", help: "The app key clients must use in /app/KEY.", default: "sim-key"),
            OptionSpec("app-secret", value: "secret", help: "Secret that signs channel auth and sign-in.", default: "sim-secret"),
            OptionSpec("activity-timeout", value: "seconds", help: "activity_timeout sent in the handshake.", default: "120"),
            OptionSpec("event-interval", value: "duration", help: "Server event on each subscribed channel this often; 0 for none.", default: "5s"),
            OptionSpec("prefix", value: "prefix", help: "Event prefix: bird, pusher, or a custom server's (letters, digits, '-').", default: "bird"),
            OptionSpec("close-after", value: "duration", help: "Close every connection this long after it opened, with --close-code."),
            OptionSpec("close-code", value: "code", help: "Close code for --close-after.", default: "4200"),
            OptionSpec("close-final", help: "signalr: --close-after's close message carries an error and no allowReconnect."),
            OptionSpec("close-no-reconnect", help: "signalr: --close-after's close message says allowReconnect false (no error)."),
            OptionSpec("refuse-code", value: "code", help: "Refuse every connection with this close code (P:error, then close), no handshake."),
            OptionSpec("omit-socket-id", help: "Send the handshake without socket_id (a broken server)."),
            OptionSpec("stall-pongs", help: "Answer no ping, so clients' stale checks fire (socketio: send no ping)."),
            OptionSpec("ping-interval", value: "duration", help: "socketio: the server's ping period, in the open packet.", default: "25s"),
            OptionSpec("ping-timeout", value: "duration", help: "socketio: how long the server waits for a pong, in the open packet.", default: "20s"),
            OptionSpec("keep-alive-interval", value: "duration", help: "signalr: how often the hub pings each connection (KeepAliveInterval).", default: "15s"),
            OptionSpec("duration", value: "duration", help: "Stop after this long (default: run until SIGINT or SIGTERM)."),
            OptionSpec("seed", value: "n", help: "Seed for socket ids, so runs repeat (default: random)."),
            OptionSpec("verbose", short: "v", help: "Log connections, subscriptions and refusals on standard error."),
        ])

    static func run(_ arguments: ParsedArguments) throws -> Int32 {
        let listenText = try arguments.required("listen")
        guard case .success(let address) = HostPort.parse(listenText) else {
            throw UsageError("\(arguments.command): invalid value '\(listenText)' for '--listen': expected HOST:PORT, e.g. 127.0.0.1:8080 or [::1]:0")
        }
        var settings = SimServerSettings()
        settings.protocolName = try arguments.required("protocol")
        guard SimServerProtocols.names.contains(settings.protocolName) else {
            throw UsageError("\(arguments.command): invalid value '\(TerminalText.escape(settings.protocolName))' for '--protocol': expected one of \(SimServerProtocols.names.joined(separator: ", "))")
        }
        settings.appKey = try arguments.required("app-key")
        settings.appSecret = try arguments.required("app-secret")
        settings.prefix = try SimCommands.prefix(arguments)
        settings.activityTimeout = try arguments.parse("activity-timeout", as: "whole seconds >= 1") { Int($0).flatMap { $0 >= 1 ? $0 : nil } } ?? 120
        let interval = try SimCommands.duration(arguments, "event-interval")
        settings.eventInterval = interval == 0 ? nil : interval
        settings.closeAfter = try SimCommands.duration(arguments, "close-after")
        settings.closeCode = try SimCommands.closeCode(arguments, "close-code") ?? 4200
        settings.refuseCode = try SimCommands.closeCode(arguments, "refuse-code")
        settings.omitSocketID = arguments.flag("omit-socket-id")
        settings.stallPongs = arguments.flag("stall-pongs")
        settings.closeFinal = arguments.flag("close-final")
        settings.closeNoReconnect = arguments.flag("close-no-reconnect")
        settings.pingInterval = try SimCommands.positiveDuration(arguments, "ping-interval") ?? settings.pingInterval
        settings.pingTimeout = try SimCommands.positiveDuration(arguments, "ping-timeout") ?? settings.pingTimeout
        settings.keepAliveInterval = try SimCommands.positiveDuration(arguments, "keep-alive-interval") ?? settings.keepAliveInterval
        let duration = try SimCommands.duration(arguments, "duration")
        let seed = try SimCommands.seed(arguments)

        let loop = try EventLoop()
        let runner = SimServerRunner(loop: loop, settings: settings, seed: seed)
        if arguments.flag("verbose") { runner.onLog = { Console.err(TerminalText.escape("sim server: \($0)") + "\n") } }
        let bound: String
        do {
            bound = try runner.listen(address)
        } catch {
            Console.err("faultline sim server: \(error)\n")
            return ExitStatus.failure
        }
        Console.out("listening on \(bound)\n")
        try SimCommands.run(loop, duration: duration, grace: 200_000, finish: { runner.goAway() }, cleanup: { runner.stop() })
        return ExitStatus.success
    }
}

enum SimClientCLI: Command {
    static let bugList = SimBug.allCases.map { bug in
        "  " + pad(bug.rawValue, 22) + pad(bug.ruleID, 25) + bug.summary
    }.joined(separator: "\n")

    private static func pad(_ text: String, _ width: Int) -> String {
        text + String(repeating: " ", count: max(1, width - text.count))
    }

    static let spec = CommandSpec(
        name: "client",
        abstract: "Run reference clients that follow the Bird Realtime connection lifecycle.",
        discussion: """
            Each client follows the Bird lifecycle (docs/rules.md) exactly: six states, full-jitter exponential backoff
            (base 1 s, cap 30 s, reset on each handshake), close codes 4000-4099 -> failed,
            4200-4299 -> reconnect at once, others -> unavailable + backoff, the stale check
            (ping after the activity timeout, close 4201 after the pong timeout), re-subscribe
            with fresh auth and sign in again after every reconnect, no client events while
            unsubscribed. Every state change is printed as
            'client N: FROM -> TO (detail)'. The clients sign channel and sign-in auth with
            --app-secret themselves, standing in for an app's auth endpoint.

            --bug NAME switches on one deliberate deviation (repeatable):
            \(bugList)
            """,
        options: [
            OptionSpec("url", value: "url", help: "Server to connect to: ws://HOST:PORT/app/KEY[?query].", required: true),
            OptionSpec("clients", value: "n", help: "Number of clients, all on one event loop.", default: "1"),
            OptionSpec("bug", value: "name", help: "A deliberate deviation (see above), repeatable.", repeatable: true, choices: SimBug.names),
            OptionSpec("channels", value: "list", help: "Channels to subscribe, comma-separated.", default: "news,private-chat,presence-lobby"),
            OptionSpec("duration", value: "duration", help: "Stop (disconnect and exit) after this long (default: until SIGINT or SIGTERM)."),
            OptionSpec("seed", value: "n", help: "Seed for backoff draws and keys, so runs repeat (default: random, printed)."),
            OptionSpec("backoff-base", value: "duration", help: "Backoff base.", default: "1s"),
            OptionSpec("backoff-cap", value: "duration", help: "Backoff cap.", default: "30s"),
            OptionSpec("activity-timeout", value: "duration", help: "Activity timeout until a handshake supplies one.", default: "120s"),
            OptionSpec("pong-timeout", value: "duration", help: "How long a ping waits for any frame.", default: "30s"),
            OptionSpec("handshake-timeout", value: "duration", help: "How long a new socket waits for the handshake.", default: "10s"),
            OptionSpec("trigger-interval", value: "duration", help: "A client event on each private/presence channel this often; 0 for none.", default: "10s"),
            OptionSpec("app-key", value: "key", help: "App key for signatures (default: the one in --url)."),
            OptionSpec("app-secret", value: "secret", help: "Secret the clients sign auth with.", default: "sim-secret"),
            OptionSpec("prefix", value: "prefix", help: "Event prefix: bird, pusher, or a custom server's (letters, digits, '-').", default: "bird"),
            OptionSpec("user", value: "id", help: "Client N signs in as ID-N.", default: "sim-user"),
            OptionSpec("no-signin", help: "Do not sign in."),
            OptionSpec("verbose", short: "v", help: "Also print the events each client receives."),
        ])

    static func run(_ arguments: ParsedArguments) throws -> Int32 {
        let command = arguments.command
        let url: SimURL
        do {
            url = try SimURL.parse(try arguments.required("url"))
        } catch let error as SimURLError {
            throw UsageError("\(command): invalid value for '--url': \(error.message)")
        }
        let count = try arguments.parse("clients", as: "a number from 1 to 10000") { Int($0).flatMap { (1...10_000).contains($0) ? $0 : nil } } ?? 1
        var settings = SimClientSettings()
        settings.appKey = arguments.value("app-key") ?? url.appKey ?? "sim-key"
        settings.appSecret = try arguments.required("app-secret")
        settings.prefix = try SimCommands.prefix(arguments)
        settings.channels = try arguments.required("channels").split(separator: ",").map { String($0) }
        settings.bugs = Set(arguments.all("bug").compactMap(SimBug.init(rawValue:)))
        let base = try SimCommands.duration(arguments, "backoff-base") ?? SimDuration.second
        let cap = try SimCommands.duration(arguments, "backoff-cap") ?? 30 * SimDuration.second
        guard base > 0, cap >= base else { throw UsageError("\(command): '--backoff-base' must be > 0 and at most '--backoff-cap'") }
        settings.backoff = Backoff(base: base, cap: cap)
        settings.activityTimeout = try positive(arguments, "activity-timeout") ?? settings.activityTimeout
        settings.pongTimeout = try positive(arguments, "pong-timeout") ?? settings.pongTimeout
        settings.handshakeTimeout = try positive(arguments, "handshake-timeout") ?? settings.handshakeTimeout
        let trigger = try SimCommands.duration(arguments, "trigger-interval")
        settings.triggerInterval = trigger == 0 ? nil : trigger
        let user = try arguments.required("user")
        let signin = !arguments.flag("no-signin")
        let duration = try SimCommands.duration(arguments, "duration")
        let seed = try SimCommands.seed(arguments)
        if arguments.value("seed") == nil { Console.err("sim client: seed \(seed)\n") }

        let all = (1...count).map { number -> SimClientSettings in
            var one = settings
            one.userID = signin ? "\(user)-\(number)" : nil
            return one
        }
        let loop = try EventLoop()
        let runner = SimClientRunner(loop: loop, url: url, clients: all, seed: seed)
        runner.onStateChange = { number, from, to, detail in
            Console.out(TerminalText.escape("client \(number): \(from.rawValue) -> \(to.rawValue) (\(detail))") + "\n")
        }
        // Log lines, states and events quote what the server sent: escaped for the terminal.
        runner.onLog = { number, line in Console.err(TerminalText.escape("client \(number): \(line)") + "\n") }
        if arguments.flag("verbose") {
            runner.onDelivered = { number, message in
                Console.err(TerminalText.escape("client \(number): event \(message.event)\(message.channel.map { " on \($0)" } ?? "")") + "\n")
            }
        }
        runner.start()
        try SimCommands.run(loop, duration: duration, grace: 300_000, finish: { runner.disconnectAll() }, cleanup: { runner.stop() })
        return ExitStatus.success
    }

    private static func positive(_ arguments: ParsedArguments, _ name: String) throws(UsageError) -> SimMicros? {
        try arguments.parse(name, as: "a duration above 0 such as 500ms or 2s") { SimDuration.parse($0).flatMap { $0 > 0 ? $0 : nil } }
    }
}
