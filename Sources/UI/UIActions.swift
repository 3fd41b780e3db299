import ControlAPI
import Faults
import JSON
import Vocabulary

/// The page's actions, each turned into a control API request and answered by the same
/// `ControlRouter` and backend as `faultline ctl` and the toxiproxy API, so the three never
/// disagree (the rule is checked by the same parser; its error comes back with the column
/// the page underlines):
///
///     {"type":"action","id":1,"action":"apply","scope":"conn","conn":3,"rule":"close:4009"}
///     scope "conn":   POST /connections/3/apply   (now, on that connection)
///     scope "client": the same on every open connection of the row's client
///     scope "all":    POST /rules                 (every connection, new ones too)
///     "close" with "code" and "reason": the rule close:CODE,reason=REASON
///     "send" with "to" (client|server) and "text": the rule inject:TEXT,to=SIDE
///     "pause" with "from" and "match" (scope "conn" or "all"): POST /intercept
///     "resume":                                                  POST /intercept/resume
///     "decide" with "held" (an id), "decision" (forward|edit|drop) and "text" or "b64":
///                                                                POST /intercept/CONN/ID
///
/// The answer is `{"type":"result","id":1,"ok":true|false,"status":N,"body":{...}}`.
package struct UIActions {
    package let backend: (any ControlBackend)?
    private let router = ControlRouter(token: nil, loopbackOnly: false)

    package init(backend: (any ControlBackend)?) {
        self.backend = backend
    }

    /// What the page can build its fault form from: every kind with its summary, example
    /// and options (the registry `--help` lists).
    package static var faultKinds: JSONValue {
        .array(FaultRegistry.kinds.map { kind in
            var object: JSONObject = ["kind": .string(kind.kind), "summary": .string(kind.summary),
                                      "options": .array(kind.parameters.sorted().map { .string($0) })]
            if let example = kind.example { object["example"] = .string(example) }
            if let refusal = kind.openConnectionRefusal { object["new_connections_only"] = .string(refusal) }
            return .object(object)
        })
    }

    package func perform(_ message: JSONValue, model: UIModel) -> JSONValue {
        let id = message["id"] ?? .null
        guard let backend else {
            return Self.result(id: id, status: 409, body: ["error": "offline: this page shows recorded captures; actions need `faultline proxy --ui`"])
        }
        if let action = message["action"]?.stringValue, UIIntercept.actions.contains(action) {
            return Self.result(id: id, response: router.respond(to: UIIntercept.request(for: message), backend: backend))
        }
        let rule: String
        switch message["action"]?.stringValue {
        case "apply":
            rule = message["rule"]?.stringValue ?? ""
        case "close":
            let code = message["code"]?.intValue.map(String.init) ?? ""
            let reason = message["reason"]?.stringValue ?? ""
            rule = "close:\(code)" + (reason.isEmpty ? "" : ",reason=\(reason)")
        case "send":
            let to = message["to"]?.stringValue == "server" ? "server" : "client"
            rule = "inject:\(message["text"]?.stringValue ?? ""),to=\(to)"
        default:
            return Self.result(id: id, status: 400, body: ["error": "unknown action (actions: apply, close, send, pause, resume, decide)"])
        }
        let body = Array(rule.utf8)
        let conn = message["conn"]?.intValue.flatMap { $0 > 0 && $0 <= Int64(Int32.max) ? Int($0) : nil }
        switch message["scope"]?.stringValue ?? "conn" {
        case "all":
            return answer(ControlRequest(method: "POST", path: "/rules", body: body), id: id, backend: backend)
        case "client":
            guard let conn, let client = model.rows[conn]?.client else {
                return Self.result(id: id, status: 404, body: ["error": "no client known for that connection yet"])
            }
            let open = model.rows.values.filter { $0.client == client && $0.endedAt == nil }.map(\.conn).sorted()
            guard !open.isEmpty else {
                return Self.result(id: id, status: 404, body: ["error": .string("client \(client) has no open connection")])
            }
            var last = JSONValue.null
            for c in open {
                let response = router.respond(to: ControlRequest(method: "POST", path: "/connections/\(c)/apply", body: body), backend: backend)
                guard response.status < 300 else { return Self.result(id: id, response: response) }
                last = response.jsonBody ?? .null
            }
            return Self.result(id: id, status: 200, body: ["applied_to": .array(open.map { .int(Int64($0)) }), "last": last])
        default:
            guard let conn else { return Self.result(id: id, status: 400, body: ["error": "no connection chosen"]) }
            return answer(ControlRequest(method: "POST", path: "/connections/\(conn)/apply", body: body), id: id, backend: backend)
        }
    }

    /// The intercept as the page shows it for connection `conn` (its pause, its held
    /// messages), read through `GET /intercept`; nil offline.
    package func interceptState(conn: ConnectionID) -> JSONValue? {
        guard let backend else { return nil }
        return UIIntercept.state(of: router.respond(to: ControlRequest(method: "GET", path: "/intercept"), backend: backend), conn: conn)
    }

    private func answer(_ request: ControlRequest, id: JSONValue, backend: any ControlBackend) -> JSONValue {
        Self.result(id: id, response: router.respond(to: request, backend: backend))
    }

    static func result(id: JSONValue, response: ControlResponse) -> JSONValue {
        result(id: id, status: response.status, body: response.jsonBody ?? .null)
    }

    static func result(id: JSONValue, status: Int, body: JSONValue) -> JSONValue {
        ["type": "result", "id": id, "ok": .bool(status < 300), "status": .int(Int64(status)), "body": body]
    }
}
