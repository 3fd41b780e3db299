import CLI
import JSON

/// What `faultline ctl` prints for people: aligned tables and one-line confirmations. Every
/// string from the proxy (a client's User-Agent and path, rules, errors) may hold what a
/// client sent: each cell goes through `TerminalText.escape`.
package enum CtlOutput {
    package static func render(_ action: String, _ response: ControlResponse, json: Bool) -> String {
        let body = response.jsonBody
        switch action {
        case "connections":
            let rows = body?["connections"]?.arrayValue ?? []
            if rows.isEmpty { return "no open connections\n" }
            let columns = ["ID", "STATE", "CLIENT", "UPSTREAM", "OPENED", "FRAMES C>S", "FRAMES S>C", "BYTES C>S", "BYTES S>C", "FAULTS",
                           "PATH", "USER-AGENT", "CLIENT KEY"]
            let keys = ["id", "state", "client", "upstream", "opened_at", "frames_client_to_server", "frames_server_to_client",
                        "bytes_client_to_server", "bytes_server_to_client", "faults_fired", "path", "user_agent", "client_key"]
            return table(columns, rows.map { row in keys.map { cell(row[$0], seconds: $0 == "opened_at") } })
        case "rules":
            let rows = body?["rules"]?.arrayValue ?? []
            if rows.isEmpty { return "no rules\n" }
            return table(["ID", "KIND", "FIRED", "RULE"],
                         rows.map { [cell($0["id"]), cell($0["kind"]), cell($0["fired"]), cell($0["rule"])] })
        case "add":
            return "added rule \(cell(body?["id"])): \(cell(body?["rule"]))\n"
        case "remove":
            return "removed rule \(cell(body?["removed"]?["id"])): \(cell(body?["removed"]?["rule"]))\n"
        case "apply":
            return "applied \(cell(body?["rule"])) to connection \(cell(body?["connection"]))\n"
        case "reset":
            let n = body?["removed"]?.intValue ?? 0
            return "removed \(n) rule\(n == 1 ? "" : "s")\n"
        case "metrics":
            let text = String(decoding: response.body, as: UTF8.self)
            return json ? JSONWriter.serialize(samples(text)) + "\n" : TerminalText.escape(text, keepingNewlines: true)
        default:
            return "\(cell(body?["status"]))\n"
        }
    }

    /// `ctl --json`: the proxy's JSON written again by `JSONWriter`, so that whatever the
    /// proxy sent, every display-unsafe character is escaped; a body that is not JSON is
    /// escaped as text.
    package static func json(_ response: ControlResponse) -> String {
        guard let body = response.jsonBody else {
            return TerminalText.escape(String(decoding: response.body, as: UTF8.self), keepingNewlines: true)
        }
        return JSONWriter.serialize(body) + "\n"
    }

    /// Prometheus samples as JSON: {"name{labels}": value, ...}, comments left out.
    package static func samples(_ text: String) -> JSONValue {
        var object = JSONObject()
        for line in text.split(separator: "\n") where !line.hasPrefix("#") {
            guard let space = line.lastIndex(of: " ") else { continue }
            let value = line[line.index(after: space)...]
            object[String(line[..<space])] = Int64(value).map(JSONValue.int) ?? Double(value).map(JSONValue.double) ?? .string(String(value))
        }
        return .object(object)
    }

    package static func cell(_ value: JSONValue?, seconds: Bool = false) -> String {
        guard let value else { return "-" }
        switch value {
        case .string(let s): return TerminalText.escape(s)
        case .int(let i): return seconds ? "\(i).000s" : String(i)
        case .double(let d):
            let millis = Int64((d * 1000).rounded())
            let fraction = String(millis % 1000)
            return seconds ? "\(millis / 1000).\(String(repeating: "0", count: 3 - fraction.count))\(fraction)s" : String(d)
        case .null: return "-"
        default: return TerminalText.escape(JSONWriter.serialize(value))
        }
    }

    /// Left-aligned columns two spaces apart; the last column is not padded.
    package static func table(_ header: [String], _ rows: [[String]]) -> String {
        let all = [header] + rows
        let widths = header.indices.map { column in all.map { $0[column].count }.max() ?? 0 }
        return all.map { row in
            row.enumerated().map { index, text in
                index == row.count - 1 ? text : text.padding(to: widths[index])
            }.joined(separator: "  ")
        }.joined(separator: "\n") + "\n"
    }
}

extension String {
    func padding(to width: Int) -> String { count >= width ? self : self + String(repeating: " ", count: width - count) }
}
