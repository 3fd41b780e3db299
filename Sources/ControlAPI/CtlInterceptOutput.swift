import CLI
import JSON

/// What `faultline ctl intercept SUBCOMMAND` prints for people: the pauses and held
/// messages of `GET /intercept` as two tables, and one line for each decision. A held
/// message's payload is what a peer sent: every cell goes through `CtlOutput.cell`, so
/// through `TerminalText.escape`, and a long payload is cut (the whole of it is in --json).
package enum CtlInterceptOutput {
    /// The most characters of a payload the table shows.
    static let payloadWidth = 60

    package static func render(_ subcommand: String, _ response: ControlResponse) -> String {
        let body = response.jsonBody
        switch subcommand {
        case "list": return list(body)
        case "on": return "paused \(scope(body?["paused"]?["conn"])): \(holding(body?["paused"]))\n"
        case "off":
            let conn = body?["connection"]
            return "resumed \(conn == nil || conn == .null ? "every pause" : scope(conn)): what was held is forwarded\n"
        default:
            let verb = ["forward": "forwarded", "edit": "sent the edit of", "drop": "dropped"][subcommand] ?? subcommand
            return "\(verb) held message \(CtlOutput.cell(body?["id"])) of connection \(CtlOutput.cell(body?["connection"]))\n"
        }
    }

    static func list(_ body: JSONValue?) -> String {
        let pauses = body?["pauses"]?.arrayValue ?? []
        let held = body?["held"]?.arrayValue ?? []
        var out = ""
        if pauses.isEmpty {
            out += "not paused\n"
        } else {
            out += CtlOutput.table(["PAUSED", "FROM", "MATCH", "TIMEOUT"], pauses.map { pause in
                [scope(pause["conn"]), side(pause["from"]), CtlOutput.cell(pause["match"]), CtlOutput.cell(pause["timeout_s"], seconds: true)]
            })
        }
        if held.isEmpty {
            out += "no held messages\n"
        } else {
            out += "\n" + CtlOutput.table(["CONN", "ID", "FROM", "OPCODE", "LEN", "HELD AT", "RELEASED AT", "PAYLOAD"], held.map { message in
                [CtlOutput.cell(message["conn"]), CtlOutput.cell(message["id"]), CtlOutput.cell(message["from"]),
                 message["opcode"]?.intValue == 1 ? "text" : message["opcode"]?.intValue == 2 ? "binary" : CtlOutput.cell(message["opcode"]),
                 CtlOutput.cell(message["len"]), CtlOutput.cell(message["held_at_s"], seconds: true),
                 CtlOutput.cell(message["release_at_s"], seconds: true), payload(message)]
            })
        }
        for (conn, count) in body?["overflowed"]?.objectValue?.members ?? [] {   // in the proxy's order, by connection
            out += "connection \(CtlOutput.cell(.string(conn))): \(CtlOutput.cell(count)) matching messages relayed unheld (its hold was full)\n"
        }
        return out
    }

    /// "connection 3", or "every connection (new ones too)" for a pause without one.
    static func scope(_ conn: JSONValue?) -> String {
        guard let conn, conn != .null else { return "every connection (new ones too)" }
        return "connection \(CtlOutput.cell(conn))"
    }

    static func side(_ from: JSONValue?) -> String {
        guard let from, from != .null else { return "both" }
        return CtlOutput.cell(from)
    }

    /// "holding messages from the server containing 'tick'; each is forwarded unchanged after 60 s undecided".
    static func holding(_ pause: JSONValue?) -> String {
        var text = "holding messages"
        if let from = pause?["from"], from != .null { text += " from the \(CtlOutput.cell(from))" }
        if let match = pause?["match"], match != .null { text += " containing '\(CtlOutput.cell(match))'" }
        let timeout = pause?["timeout_s"]?.doubleValue.map { $0 == $0.rounded() ? String(Int64($0)) : String($0) } ?? "?"
        return text + "; each is forwarded unchanged after \(timeout) s undecided"
    }

    /// The text, or `base64 ...` for a binary message, cut to `payloadWidth` characters.
    static func payload(_ message: JSONValue) -> String {
        let raw = message["text"]?.stringValue ?? message["b64"]?.stringValue.map { "base64 " + $0 } ?? ""
        let cut = raw.count > payloadWidth ? String(raw.prefix(payloadWidth)) + "…" : raw
        return CtlOutput.cell(.string(cut))
    }
}
