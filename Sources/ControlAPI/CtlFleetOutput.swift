import JSON

/// What `faultline ctl --proxy A --proxy B ...` prints: every replica's answer side by side
/// (tables get a PROXY column, one-line answers a PROXY prefix), and which replicas gave no
/// usable answer. Pure: answers in, text out.
package enum CtlFleetOutput {
    /// One replica's answer to a request, or why there was none.
    package struct Answer: Sendable {
        package var proxy: String
        package var response: ControlResponse?
        /// Set when the replica did not answer (connection refused, timed out, not HTTP).
        package var failure: String?

        package init(proxy: String, response: ControlResponse? = nil, failure: String? = nil) {
            self.proxy = proxy
            self.response = response
            self.failure = failure
        }

        /// Answered with a 2xx status.
        package var succeeded: Bool { (response?.status ?? 0) < 400 && response != nil }
    }

    package static func render(_ action: String, _ answers: [Answer], json: Bool) -> String {
        let answered = answers.filter(\.succeeded)
        if json { return JSONWriter.serialize(jsonAnswers(action, answers)) + "\n" }
        switch action {
        case "connections":
            let rows = answered.flatMap { a in (a.response?.jsonBody?["connections"]?.arrayValue ?? []).map { (a.proxy, $0) } }
            if rows.isEmpty { return "no open connections\n" }
            let keys = ["id", "state", "client", "opened_at", "frames_client_to_server", "frames_server_to_client", "faults_fired", "client_key"]
            return CtlOutput.table(["PROXY", "ID", "STATE", "CLIENT", "OPENED", "FRAMES C>S", "FRAMES S>C", "FAULTS", "CLIENT KEY"],
                                   rows.map { proxy, row in [proxy] + keys.map { CtlOutput.cell(row[$0], seconds: $0 == "opened_at") } })
        case "rules":
            let rows = answered.flatMap { a in (a.response?.jsonBody?["rules"]?.arrayValue ?? []).map { (a.proxy, $0) } }
            if rows.isEmpty { return "no rules\n" }
            return CtlOutput.table(["PROXY", "ID", "KIND", "FIRED", "RULE"],
                                   rows.map { [$0, CtlOutput.cell($1["id"]), CtlOutput.cell($1["kind"]), CtlOutput.cell($1["fired"]), CtlOutput.cell($1["rule"])] })
        case "metrics":
            // Each replica's exposition under a comment naming it (the samples carry its replica label).
            return answered.map { "# proxy \($0.proxy)\n" + String(decoding: $0.response?.body ?? [], as: UTF8.self) }.joined()
        default:
            let width = answers.map(\.proxy.count).max() ?? 0
            return answered.map { a in
                guard let response = a.response else { return "" }
                return CtlOutput.render(action, response, json: false).split(separator: "\n", omittingEmptySubsequences: false)
                    .dropLast().map { "\(a.proxy.padding(to: width))  \($0)\n" }.joined()
            }.joined()
        }
    }

    /// `--json`: the connections and rules as one list each with a "proxy" member;
    /// anything else as {"answers": [{"proxy", "status", "body"}]}; unanswered replicas listed.
    static func jsonAnswers(_ action: String, _ answers: [Answer]) -> JSONValue {
        var root = JSONObject()
        if action == "connections" || action == "rules" {
            root[action] = .array(answers.filter(\.succeeded).flatMap { a in
                (a.response?.jsonBody?[action]?.arrayValue ?? []).map { row -> JSONValue in
                    var object = JSONObject([("proxy", .string(a.proxy))])
                    for (key, value) in row.objectValue?.members ?? [] { object[key] = value }
                    return .object(object)
                }
            })
        } else {
            root["answers"] = .array(answers.filter { $0.response != nil }.map { a in
                let body = a.response?.jsonBody ?? (action == "metrics" ? CtlOutput.samples(String(decoding: a.response?.body ?? [], as: UTF8.self)) : .null)
                return .object(["proxy": .string(a.proxy), "status": .int(Int64(a.response?.status ?? 0)), "body": body])
            })
        }
        root["unanswered"] = .array(answers.filter { $0.response == nil }.map { .object(["proxy": .string($0.proxy), "error": .string($0.failure ?? "no answer")]) })
        return .object(root)
    }

    /// The connections whose client key contains `key` (the match a rule's `client=` scope
    /// makes), by replica: which replica holds the client. Indices into `answers`.
    package static func holders(of key: String, in answers: [Answer]) -> [(answer: Int, connection: Int64)] {
        answers.enumerated().flatMap { i, a -> [(answer: Int, connection: Int64)] in
            guard a.succeeded else { return [] }
            return (a.response?.jsonBody?["connections"]?.arrayValue ?? []).compactMap { row in
                guard let id = row["id"]?.intValue, row["client_key"]?.stringValue?.contains(key) == true else { return nil }
                return (i, id)
            }
        }
    }

    /// A `watch` event line from `proxy`, with "proxy" added first (a line that is not a
    /// JSON object is carried as {"proxy", "line"}).
    package static func watchLine(_ line: String, proxy: String) -> String {
        var object = JSONObject([("proxy", .string(proxy))])
        if let members = (try? JSONParser.parse(Array(line.utf8)))?.objectValue?.members {
            for (key, value) in members where key != "proxy" { object[key] = value }
        } else {
            object["line"] = .string(line)
        }
        return JSONWriter.serialize(.object(object))
    }
}
