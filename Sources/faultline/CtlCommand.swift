import CLI
import ControlAPI
import Glibc
import JSON

/// `faultline ctl [--control HOST:PORT] [--token T] [--json] ACTION [ARGS]`: the control
/// API's command-line client. Tables for people by default, the API's JSON with --json.
/// Exit status: 0 done, 1 the API answered an error (its message is printed), 2 bad usage
/// or no proxy at the address.
enum CtlCommand: Command {
    static let defaultAddress = "127.0.0.1:8474"

    static let spec = CommandSpec(
        name: "ctl",
        abstract: "Drive a running proxy through its control API.",
        discussion: """
            Talks to 'faultline proxy --control HOST:PORT'. Actions:
              connections          list open connections (id, state, client, frames, bytes, faults)
              rules                list installed fault rules and how often each fired
              add RULE             install a rule for every connection, e.g. close:4009,after=5s
              remove ID            remove rule ID
              apply CONN RULE      apply RULE to open connection CONN (after=, on=, for= count from now)
              reset                remove every rule
              metrics              counters in Prometheus text format
              watch                stream events as JSON lines until the proxy stops:
                                   connection-opened, connection-ended, fault, finding
              health               check that the API answers
              intercept SUBCOMMAND hold messages for a decision, then forward, edit or drop
                                   each (what the UI's intercept does): list, on, off,
                                   forward, edit, drop; 'faultline help ctl intercept'
                                   shows each one's arguments and options
            The address and token may also come from FAULTLINE_CONTROL and
            FAULTLINE_CONTROL_TOKEN (a token in the environment stays out of 'ps').

            A fleet: --proxy (repeatable) or --proxies FILE sends the action to every replica's
            control API at once and shows the answers side by side (tables gain a PROXY column;
            connections, rules and watch events are merged, each naming its proxy). There
            'apply client=KEY RULE' applies RULE to the open connections whose client key
            contains KEY, on the replicas that hold them; 'add RULE' goes to every replica. A
            replica that does not answer is named on standard error and the exit status is 1.
            """,
        arguments: [
            ArgumentSpec("action", help: "connections, rules, add, remove, apply, reset, metrics, watch, health or intercept."),
            ArgumentSpec("args", help: "The action's arguments (a rule, a rule id, a connection id, intercept's subcommand).", optional: true, variadic: true),
        ],
        options: connectionOptions + [
            OptionSpec("proxy", value: "host:port", help: "A replica's control API, for a fleet; repeatable (default: --control alone).", repeatable: true),
            OptionSpec("proxies", value: "file", help: "Replicas' control APIs, one HOST:PORT a line, '#' comments (default: none)."),
        ] + CtlIntercept.optionSpecs,
        topics: [CtlIntercept.spec])

    /// How ctl reaches one proxy and prints its answer: every action's options, intercept's too.
    static let connectionOptions = [
        OptionSpec("control", value: "host:port", help: "The proxy's control API (default: $FAULTLINE_CONTROL, else \(defaultAddress))."),
        OptionSpec("token", value: "token", help: "Bearer token, when the proxy has one (default: $FAULTLINE_CONTROL_TOKEN)."),
        OptionSpec("token-file", value: "file", help: "Read the bearer token from the first line of FILE."),
        OptionSpec("json", help: "Print the API's JSON instead of tables."),
        OptionSpec("timeout", value: "seconds", help: "Give up on an unanswered request after this long.", default: "10"),
    ]

    /// Each action: its arguments' names, and the request they make.
    static let actions: [String: [String]] = [
        "connections": [], "rules": [], "add": ["RULE"], "remove": ["ID"], "apply": ["CONN", "RULE"],
        "reset": [], "metrics": [], "health": [], "watch": [], "intercept": ["SUBCOMMAND"],
    ]

    static func run(_ arguments: ParsedArguments) throws -> Int32 {
        let command = "faultline ctl"
        let action = arguments.positionals[0]
        let args = Array(arguments.positionals.dropFirst())
        guard let wanted = actions[action] else {
            throw UsageError("\(command): unknown action '\(action)' (expected one of: \(actions.keys.sorted().joined(separator: ", ")))")
        }
        if action == "intercept" {
            // Its own subcommands and their arguments, checked before anything is sent.
            _ = try CtlIntercept.request(args, arguments, command: command)
        } else {
            guard args.count == wanted.count else {
                let usage = ([action] + wanted).joined(separator: " ")
                throw UsageError("\(command) \(action): expected \(usage)" + (args.count > wanted.count ? " (unexpected '\(args[wanted.count])')" : ""))
            }
            if let option = CtlIntercept.options.first(where: { CtlIntercept.given($0.name, arguments) }) {
                throw UsageError("\(command) \(action): --\(option.name) is for 'intercept \(option.subcommands.joined(separator: "|"))'")
            }
        }
        let token = try ControlToken.resolve(arguments, flag: "token", command: command)
        let timeout = try arguments.parse("timeout", as: "seconds, more than 0") { Double($0).flatMap { $0 > 0 ? $0 : nil } } ?? 10
        let fleet = try CtlFanOut.proxies(arguments, command: command)
        if !fleet.isEmpty {
            if action == "intercept" {
                throw UsageError("\(command) intercept: a held message lives on one replica: give its --control, not --proxy or --proxies")
            }
            return try CtlFanOut.run(action, args, proxies: fleet, token: token, timeout: timeout, json: arguments.flag("json"), command: command)
        }
        let environment = { (name: String) in getenv(name).map { String(cString: $0) }.flatMap { $0.isEmpty ? nil : $0 } }
        let address = try controlAddress(arguments.value("control") ?? environment("FAULTLINE_CONTROL") ?? defaultAddress,
                                          command: command)
        let client: ControlClient
        do { client = try ControlClient(address: address, token: token, timeout: timeout) } catch {
            throw UsageError("\(command): --control \(error)")
        }

        if action == "watch" { return try watch(client, command: command) }
        let (method, path, body) = action == "intercept"
            ? try CtlIntercept.request(args, arguments, command: command) : try request(action, args, command: command)
        let response: ControlResponse
        do { response = try client.send(method, path, body: body) } catch {
            throw UsageError("\(command): \(error)")
        }
        guard response.status < 400 else {
            Console.err(errorMessage(response, command: command) + "\n")
            return ExitStatus.failure
        }
        let json = arguments.flag("json")
        if json && action != "metrics" {
            Console.out(CtlOutput.json(response))
        } else {
            Console.out(action == "intercept" ? CtlInterceptOutput.render(args[0], response) : CtlOutput.render(action, response, json: json))
        }
        return ExitStatus.success
    }

    /// HOST:PORT as given, or taken out of an http:// URL (what the proxy prints when it
    /// starts: "control API on http://127.0.0.1:7002"); https and paths are refused with a hint.
    static func controlAddress(_ text: String, command: String) throws(UsageError) -> String {
        var rest = Substring(text)
        if rest.lowercased().hasPrefix("https://") {
            throw UsageError("\(command): --control '\(text)': the control API speaks plain HTTP; give HOST:PORT, such as 127.0.0.1:7002")
        }
        if rest.lowercased().hasPrefix("http://") { rest = rest.dropFirst("http://".count) }
        while rest.hasSuffix("/") { rest = rest.dropLast() }
        if rest.contains("/") {
            throw UsageError("\(command): --control '\(text)': expected HOST:PORT or http://HOST:PORT, without a path")
        }
        return String(rest)
    }

    /// `ctl watch`: every event line as it comes, flushed at once, until the proxy ends the
    /// stream (exit 0) or refuses it (exit 1 with its message).
    static func watch(_ client: ControlClient, command: String) throws -> Int32 {
        let refused: ControlResponse?
        do {
            refused = try client.stream("/events") { line in
                Console.out(TerminalText.escape(line) + "\n")   // unbuffered: each event shows at once
            }
        } catch {
            throw UsageError("\(command): \(error)")
        }
        guard let refused else { return ExitStatus.success }
        Console.err(errorMessage(refused, command: command) + "\n")
        return ExitStatus.failure
    }

    static func request(_ action: String, _ args: [String], command: String) throws(UsageError) -> (String, String, [UInt8]?) {
        func ruleBody(_ rule: String) -> [UInt8] { Array(JSONWriter.serialize(["rule": .string(rule)]).utf8) }
        func number(_ text: String, _ what: String) throws(UsageError) -> String {
            guard let n = Int(text), n >= 0 else { throw UsageError("\(command) \(action): \(what) '\(text)' is not a number") }
            return String(n)
        }
        switch action {
        case "connections": return ("GET", "/connections", nil)
        case "rules": return ("GET", "/rules", nil)
        case "add": return ("POST", "/rules", ruleBody(args[0]))
        case "remove": return ("DELETE", "/rules/\(try number(args[0], "rule id"))", nil)
        case "apply": return ("POST", "/connections/\(try number(args[0], "connection id"))/apply", ruleBody(args[1]))
        case "reset": return ("POST", "/reset", nil)
        case "metrics": return ("GET", "/metrics", nil)
        default: return ("GET", "/health", nil)
        }
    }

    /// "faultline ctl: 400 Bad Request: fault rule 'close:99999' (column 7): ..." and, for a
    /// refused rule, the rule with a caret line under the bad part.
    static func errorMessage(_ response: ControlResponse, command: String) -> String {
        // The caret line under a refused rule is a second line on purpose; all else is escaped.
        TerminalText.escape(unescapedErrorMessage(response, command: command), keepingNewlines: true)
    }

    private static func unescapedErrorMessage(_ response: ControlResponse, command: String) -> String {
        var status = "\(response.status) \(ControlResponse.reason(response.status))"
        if response.status == 401 {
            status += " (the proxy was started with --control-token: give the same token with --token or FAULTLINE_CONTROL_TOKEN)"
        }
        guard let body = response.jsonBody, let error = body["error"]?.stringValue else {
            let text = String(decoding: response.body.prefix(500), as: UTF8.self).trimmingCharacters(in: " \r\n")
            return "\(command): \(status)" + (text.isEmpty ? "" : ": \(text)")
        }
        if let detail = body["detail"]?.stringValue { return "\(command): \(status): \(detail)" }
        return "\(command): \(status): \(error)"
    }
}
