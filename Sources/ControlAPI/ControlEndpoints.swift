import Capture
import Faults
import JSON
import Vocabulary

/// What each endpoint does to the backend; `ControlRouter` has already checked access,
/// path and method.
struct ControlEndpoints {
    let backend: any ControlBackend

    func connections() -> ControlResponse {
        .json(200, ["connections": .array(backend.connectionSummaries())])
    }

    func listRules() -> ControlResponse {
        let engine = backend.faultEngine
        return .json(200, ["rules": .array(engine.list().map { Self.json(id: $0.id, rule: $0.rule, fired: engine.firedCount(rule: $0.id)) })])
    }

    func rule(_ id: Int) -> ControlResponse {
        let engine = backend.faultEngine
        guard let entry = engine.list().first(where: { $0.id == id }) else { return noRule(id) }
        return .json(200, Self.json(id: entry.id, rule: entry.rule, fired: engine.firedCount(rule: id)))
    }

    /// Installs a rule for every connection, open ones included, and tells them at once.
    func addRule(body: [UInt8]) -> ControlResponse {
        let rule: FaultRule
        switch ControlEndpoints.parseRule(body) {
        case .success(let parsed): rule = parsed
        case .failure(let refusal): return refusal.response
        }
        let id = backend.faultEngine.add(rule)
        backend.faultsChanged(connection: nil)
        return .json(201, Self.json(id: id, rule: rule),
                     headers: [.init("Location", "/rules/\(id)")])
    }

    func removeRule(_ id: Int) -> ControlResponse {
        let engine = backend.faultEngine
        guard let entry = engine.list().first(where: { $0.id == id }), engine.remove(id: id) else { return noRule(id) }
        backend.faultsChanged(connection: nil)
        return .json(200, ["removed": Self.json(id: entry.id, rule: entry.rule)])
    }

    /// Applies a rule to one open connection now, whatever its triggers and scope say.
    func apply(to connection: ConnectionID, body: [UInt8]) -> ControlResponse {
        let rule: FaultRule
        switch ControlEndpoints.parseRule(body) {
        case .success(let parsed): rule = parsed
        case .failure(let refusal): return refusal.response
        }
        if let refusal = Self.refusalToApply(rule) { return refusal }
        let open = backend.connectionSummaries().compactMap { $0["id"]?.intValue }
        guard open.contains(Int64(connection)) else {
            return .error(404, "no open connection \(connection) (open: \(open.isEmpty ? "none" : open.map(String.init).joined(separator: ", ")))")
        }
        backend.faultEngine.applyNow(rule, to: connection)
        guard backend.faultsChanged(connection: connection) else {
            return .error(404, "connection \(connection) closed before the rule could be applied")
        }
        return .json(200, ["connection": .int(Int64(connection)), "rule": .string(rule.text), "kind": .string(rule.kind)])
    }

    /// Keys that choose connections; an applied rule's connection is the one in the path.
    static let scopeKeys = ["conn", "every", "client", "prob"]

    /// The 400 for a rule that could not act on an open connection: a kind that acts on the
    /// upgrade or the handshake, or a scope key (the connection is already chosen). Start
    /// conditions (`after=`, `at=`, `on=`, `frames=`) and `for=` are honoured, counted from
    /// the moment the rule is applied.
    static func refusalToApply(_ rule: FaultRule) -> ControlResponse? {
        if let reason = FaultRegistry.kind(named: rule.kind)?.openConnectionRefusal {
            return .error(400, "cannot apply '\(rule.text)' to an open connection: \(reason); add it with POST /rules to act on new connections",
                          extra: [("rule", .string(rule.text))])
        }
        let trigger = rule.trigger
        let given = [trigger.connections != nil, trigger.every != nil, trigger.client != nil, trigger.probability != nil]
        if let key = zip(scopeKeys, given).first(where: { $0.1 })?.0 {
            return .error(400, "cannot apply '\(rule.text)' with \(key)=: an applied rule acts on the connection named in the path; remove \(key)= or add the rule with POST /rules",
                          extra: [("rule", .string(rule.text))])
        }
        return nil
    }

    func reset() -> ControlResponse {
        let engine = backend.faultEngine
        let count = engine.list().count
        engine.reset()
        backend.faultsChanged(connection: nil)
        return .json(200, ["removed": .int(Int64(count))])
    }

    func metrics() -> ControlResponse {
        let text = PrometheusText.render(backend.metrics(), engine: backend.faultEngine)
        return ControlResponse(status: 200, headers: [.init("Content-Type", "text/plain; version=0.0.4; charset=utf-8")],
                               body: Array(text.utf8))
    }

    private func noRule(_ id: Int) -> ControlResponse {
        let ids = backend.faultEngine.list().map { String($0.id) }
        return .error(404, "no rule \(id) (rules: \(ids.isEmpty ? "none" : ids.joined(separator: ", ")))")
    }

    static func json(id: Int, rule: FaultRule, fired: Int? = nil) -> JSONValue {
        var object: JSONObject = ["id": .int(Int64(id)), "rule": .string(rule.text), "kind": .string(rule.kind)]
        if let fired { object["fired"] = .int(Int64(fired)) }
        return .object(object)
    }

    // MARK: Rule bodies

    /// Why a body holds no usable rule, as the 400 response.
    struct Refusal: Error {
        var response: ControlResponse
    }

    /// A rule from `{"rule": "..."}` (a body starting with `{`) or from the body as text.
    static func parseRule(_ body: [UInt8]) -> Result<FaultRule, Refusal> {
        guard let text = String(validating: body, as: UTF8.self) else {
            return .failure(Refusal(response: .error(400, "the body is not UTF-8 text")))
        }
        let trimmed = text.trimmingCharacters(in: " \t\r\n")
        guard !trimmed.isEmpty else {
            return .failure(Refusal(response: .error(400, "missing rule: send {\"rule\": \"RULE\"} or the rule as plain text")))
        }
        var ruleText = trimmed
        if trimmed.hasPrefix("{") {
            let value: JSONValue
            do { value = try JSONParser.parse(trimmed) } catch {
                return .failure(Refusal(response: .error(400, "the body is not valid JSON: \(error)")))
            }
            guard let rule = value["rule"]?.stringValue else {
                return .failure(Refusal(response: .error(400, "the JSON body needs a string member 'rule', e.g. {\"rule\": \"close:4009\"}")))
            }
            ruleText = rule
        }
        do {
            return .success(try FaultRule.parse(ruleText))
        } catch {
            return .failure(Refusal(response: .error(400, error.summary, extra: [
                ("rule", .string(error.rule)),
                ("column", .int(Int64(error.column + 1))),
                ("length", .int(Int64(error.length))),
                ("detail", .string(error.description)),
            ])))
        }
    }
}

extension String {
    /// Without leading and trailing characters from `set` (also for `ctl` and `ControlToken`).
    package func trimmingCharacters(in set: String) -> String {
        let drop: (Character) -> Bool = { set.contains($0) }
        guard let start = firstIndex(where: { !drop($0) }) else { return "" }
        let end = lastIndex(where: { !drop($0) })!
        return String(self[start...end])
    }
}
