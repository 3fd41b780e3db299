import CLI
import ControlAPI
import Faults
import JSON
import ProxyCore
import Vocabulary

/// `faultline ctl intercept SUBCOMMAND`: the control API's `/intercept` endpoints from the
/// command line (the UI's intercept travels on the same ones), one subcommand each:
///
///     list                      GET  /intercept
///     on [CONN]                 POST /intercept          {"conn","from","match","timeout"}
///     off [CONN]                POST /intercept/resume   {"conn"}
///     forward|drop CONN ID      POST /intercept/CONN/ID  {"action"}
///     edit CONN ID TEXT         POST /intercept/CONN/ID  {"action":"edit","text"} ("b64" with --base64)
enum CtlIntercept {
    /// `faultline help ctl intercept` and `ctl intercept --help`: the subcommands with their
    /// arguments, and only the options an intercept request takes.
    static let spec = CommandSpec(
        name: "intercept",
        abstract: "Hold a running proxy's messages for a decision: forward, edit or drop each one.",
        discussion: """
            What the UI's intercept does, through the same control API endpoints. Subcommands:
              list                 the pauses, and the held messages with their ids and text
              on [CONN]            hold CONN's messages (no CONN: every connection, new ones
                                   too); --from, --match and --hold-timeout narrow it
              off [CONN]           end the pause (no CONN: every pause); what is held goes on
              forward CONN ID      send held message ID as it came
              edit CONN ID TEXT    send TEXT in its place (--base64: TEXT is base64 bytes)
              drop CONN ID         send nothing; the capture records what was dropped
            A held message that nobody decides on is forwarded unchanged when its hold
            timeout passes. A held message lives on one proxy: --proxy and --proxies are
            refused here.
            """,
        usage: "faultline ctl [--control <host:port>] [--token <token>] [--json] intercept <subcommand> [<args> ...] [options]",
        arguments: [
            ArgumentSpec("subcommand", help: "What to do.", choices: subcommands.map(\.name)),
            ArgumentSpec("args", help: "The subcommand's arguments: CONN (a connection id), ID (a held message's id), TEXT.", optional: true, variadic: true),
        ],
        options: CtlCommand.connectionOptions + optionSpecs)

    /// The options that only `intercept` takes (each help names its subcommand).
    static let optionSpecs = [
        OptionSpec("from", value: "side", help: "intercept on: hold only the messages this side sends (default: both).", choices: ["client", "server"]),
        OptionSpec("match", value: "text", help: "intercept on: hold only the messages whose payload contains TEXT (default: every message)."),
        OptionSpec("hold-timeout", value: "duration", help: "intercept on: forward a held message unchanged after this long undecided, 1s to 1h.", default: "60s"),
        OptionSpec("base64", help: "intercept edit: TEXT is the new message's bytes in base64 (for a binary message)."),
    ]

    /// Each subcommand's arguments; a name in brackets may be left out.
    static let subcommands: [(name: String, arguments: [String])] = [
        ("list", []), ("on", ["[CONN]"]), ("off", ["[CONN]"]),
        ("forward", ["CONN", "ID"]), ("edit", ["CONN", "ID", "TEXT"]), ("drop", ["CONN", "ID"]),
    ]

    /// The options that only `intercept` takes, and the subcommands each belongs to.
    static let options: [(name: String, subcommands: [String])] = [
        ("from", ["on"]), ("match", ["on"]), ("hold-timeout", ["on"]), ("base64", ["edit"]),
    ]

    /// The request for `ctl intercept ARGS`, or a usage error naming the argument or flag at fault.
    static func request(_ args: [String], _ arguments: ParsedArguments, command: String) throws(UsageError) -> (String, String, [UInt8]?) {
        let names = subcommands.map(\.name)
        guard let sub = args.first else {
            throw UsageError("\(command) intercept: missing subcommand (expected one of: \(names.joined(separator: ", ")))")
        }
        guard let wanted = subcommands.first(where: { $0.name == sub })?.arguments else {
            let hint = Suggestion.closest(to: sub, in: names).map { " (did you mean '\($0)'?)" } ?? ""
            throw UsageError("\(command) intercept: unknown subcommand '\(sub)'\(hint) (expected one of: \(names.joined(separator: ", ")))")
        }
        let rest = Array(args.dropFirst())
        let required = wanted.filter { !$0.hasPrefix("[") }.count
        guard (required...wanted.count).contains(rest.count) else {
            let usage = (["intercept", sub] + wanted).joined(separator: " ")
            throw UsageError("\(command) intercept \(sub): expected \(usage)" + (rest.count > wanted.count ? " (unexpected '\(rest[wanted.count])')" : ""))
        }
        for option in options where !option.subcommands.contains(sub) && given(option.name, arguments) {
            throw UsageError("\(command) intercept \(sub): --\(option.name) is for 'intercept \(option.subcommands.joined(separator: "|"))'")
        }
        func number(_ text: String, _ what: String) throws(UsageError) -> Int64 {
            guard let n = Int64(text), n > 0, n <= Int64(Int32.max) else {
                throw UsageError("\(command) intercept \(sub): \(what) '\(text)' is not a positive number")
            }
            return n
        }
        func body(_ object: JSONObject) -> [UInt8] { Array(JSONWriter.serialize(.object(object)).utf8) }
        switch sub {
        case "list":
            return ("GET", "/intercept", nil)
        case "on":
            var object = JSONObject()
            if let conn = rest.first { object["conn"] = .int(try number(conn, "connection id")) }
            if let from = arguments.value("from") { object["from"] = .string(from) }   // client or server: checked as a choice
            if let match = arguments.value("match") {
                guard !match.isEmpty else { throw UsageError("\(command) intercept on: --match needs the text to look for") }
                object["match"] = .string(match)
            }
            if let timeout = arguments.value("hold-timeout") {
                // Checked here too, so the error names the flag; the proxy checks it again.
                guard case .success(let micros) = FaultDuration.parse(timeout), InterceptPause.timeoutRange.contains(micros) else {
                    throw UsageError("\(command) intercept on: invalid value '\(timeout)' for '--hold-timeout': expected a duration of 1s to 1h, such as 30s or 5m")
                }
                object["timeout"] = .string(timeout)
            }
            return ("POST", "/intercept", body(object))
        case "off":
            var object = JSONObject()
            if let conn = rest.first { object["conn"] = .int(try number(conn, "connection id")) }
            return ("POST", "/intercept/resume", body(object))
        default:
            let conn = try number(rest[0], "connection id"), id = try number(rest[1], "message id")
            var object: JSONObject = ["action": .string(sub)]
            if sub == "edit" {
                if arguments.flag("base64") {
                    guard Base64.decode(rest[2]) != nil else {
                        throw UsageError("\(command) intercept edit: --base64: '\(rest[2])' is not base64")
                    }
                    object["b64"] = .string(rest[2])
                } else {
                    object["text"] = .string(rest[2])
                }
            }
            return ("POST", "/intercept/\(conn)/\(id)", body(object))
        }
    }

    static func given(_ option: String, _ arguments: ParsedArguments) -> Bool {
        arguments.flag(option) || !arguments.all(option).isEmpty
    }
}
