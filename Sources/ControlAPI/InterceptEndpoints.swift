import Faults
import JSON
import ProxyCore
import Vocabulary

/// The intercept's endpoints (the page's intercept travels on them too):
///
///     GET  /intercept              {"pauses":[{"conn":3|null,"from":"server"|null,"match":..,"timeout_s":60}],
///                                   "held":[{"conn","id","from","opcode","len","text"|"b64","held_at_s","release_at_s"}],
///                                   "overflowed":{"3":N}}   (times on the capture's clock, as frames' "t")
///     POST /intercept              {"conn":3} pauses connection 3 (no conn: every connection, new ones
///                                   too); "from" (client|server), "match" (text the payload contains)
///                                   and "timeout" (a duration, default 60s) narrow it
///     POST /intercept/resume       {"conn":3} (or {} for every pause): held messages are forwarded
///     POST /intercept/{conn}/{id}  {"action":"forward"|"drop"} or {"action":"edit","text":"..."}
///                                   ("b64" for a binary message's new bytes) -> {"connection","id","decision"}
///
/// The answers to POST are those of the desk: the session acts on them when the backend
/// tells it (`faultsChanged`), in the order they were made.
struct InterceptEndpoints {
    let backend: any ControlBackend

    private var desk: InterceptDesk? { backend.interceptDesk }

    func list() -> ControlResponse {
        guard let desk else { return Self.unavailable }
        let (held, overflowed) = desk.listed()
        let pauses: [JSONValue] = desk.pauses().map { entry in
            Self.pauseJSON(conn: entry.conn, entry.pause)
        }
        let messages: [JSONValue] = held.map { message in
            var object: JSONObject = ["conn": .int(Int64(message.conn)), "id": .int(Int64(message.id)),
                                      "from": .string(message.from.rawValue), "opcode": .int(Int64(message.opcode.rawValue)),
                                      "len": .int(Int64(message.payload.count)),
                                      "held_at_s": .double(Double(message.heldAt) / 1_000_000),
                                      "release_at_s": .double(Double(message.deadline) / 1_000_000)]
            if message.opcode == .text, let text = String(validating: message.payload, as: UTF8.self) {
                object["text"] = .string(text)
            } else {
                object["b64"] = .string(Base64.encode(message.payload))
            }
            return .object(object)
        }
        let counts = JSONObject(overflowed.sorted { $0.key < $1.key }.map { (String($0.key), JSONValue.int(Int64($0.value))) })
        return .json(200, ["pauses": .array(pauses), "held": .array(messages), "overflowed": .object(counts)])
    }

    func pause(body: [UInt8]) -> ControlResponse {
        guard let desk else { return Self.unavailable }
        let (object, conn): (JSONValue, ConnectionID?)
        switch Self.objectNamingConnection(body) {
        case .success(let value): (object, conn) = value
        case .failure(let refusal): return refusal.response
        }
        var from: Side?
        if let text = object["from"]?.stringValue {
            guard let side = Side(rawValue: text) else { return .error(400, "'from' is client or server, not '\(text)'") }
            from = side
        }
        var timeout = InterceptPause.defaultTimeout
        if let text = object["timeout"]?.stringValue {
            switch FaultDuration.parse(text) {
            case .success(let micros):
                guard InterceptPause.timeoutRange.contains(micros) else {
                    return .error(400, "'timeout' must be between 1s and 1h (a held message is forwarded unchanged when it passes)")
                }
                timeout = micros
            case .failure(let error): return .error(400, "'timeout': \(error)")
            }
        }
        if let conn, !backend.connectionSummaries().contains(where: { $0["id"]?.intValue == Int64(conn) }) {
            return .error(404, "no open connection \(conn)")
        }
        let pause = InterceptPause(from: from, match: object["match"]?.stringValue, timeout: timeout)
        desk.pause(conn, pause)
        backend.faultsChanged(connection: conn)
        return .json(200, ["paused": Self.pauseJSON(conn: conn, pause), "connection": conn.map { .int(Int64($0)) } ?? .null])
    }

    func resume(body: [UInt8]) -> ControlResponse {
        guard let desk else { return Self.unavailable }
        let conn: ConnectionID?
        switch Self.objectNamingConnection(body) {
        case .success(let value): conn = value.1
        case .failure(let refusal): return refusal.response
        }
        desk.resume(conn)
        backend.faultsChanged(connection: conn)
        return .json(200, ["resumed": true, "connection": conn.map { .int(Int64($0)) } ?? .null])
    }

    func decide(connection conn: ConnectionID, id: Int, body: [UInt8]) -> ControlResponse {
        guard let desk else { return Self.unavailable }
        let object: JSONValue
        switch Self.object(body) {
        case .success(let value): object = value
        case .failure(let refusal): return refusal.response
        }
        let decision: InterceptDecision
        switch object["action"]?.stringValue {
        case "forward": decision = .forward
        case "drop": decision = .drop
        case "edit":
            if let text = object["text"]?.stringValue {
                decision = .edit(Array(text.utf8))
            } else if let b64 = object["b64"]?.stringValue, let bytes = Base64.decode(b64) {
                decision = .edit(bytes)
            } else {
                return .error(400, "an edit needs the new message: \"text\" (or \"b64\" for binary)")
            }
        default:
            return .error(400, "'action' is forward, edit or drop")
        }
        guard desk.decide(conn, id: id, decision) else {
            return .error(404, "connection \(conn) holds no message \(id) (decided already, released by its timeout, or never held)")
        }
        backend.faultsChanged(connection: conn)
        return .json(200, ["connection": .int(Int64(conn)), "id": .int(Int64(id)), "decision": object["action"] ?? .null])
    }

    // MARK: Bodies

    static let unavailable = ControlResponse.error(501, "this backend has no intercept")

    static func pauseJSON(conn: ConnectionID?, _ pause: InterceptPause) -> JSONValue {
        ["conn": conn.map { .int(Int64($0)) } ?? .null, "from": pause.from.map { .string($0.rawValue) } ?? .null,
         "match": pause.match.map { .string($0) } ?? .null, "timeout_s": .double(Double(pause.timeout) / 1_000_000)]
    }

    /// The body as a JSON object; an empty body is `{}`.
    static func object(_ body: [UInt8]) -> Result<JSONValue, ControlEndpoints.Refusal> {
        if body.allSatisfy({ $0 == 32 || $0 == 9 || $0 == 10 || $0 == 13 }) { return .success(.object([:])) }
        guard let value = try? JSONParser.parse(body), value.objectValue != nil else {
            return .failure(.init(response: .error(400, "the body must be a JSON object")))
        }
        return .success(value)
    }

    /// The body as a JSON object and its "conn" (nil when absent: every connection).
    static func objectNamingConnection(_ body: [UInt8]) -> Result<(JSONValue, ConnectionID?), ControlEndpoints.Refusal> {
        object(body).flatMap { object in
            guard let member = object["conn"], member != .null else { return .success((object, nil)) }
            guard let number = member.intValue, number > 0, number <= Int64(Int32.max) else {
                return .failure(.init(response: .error(400, "'conn' must be a connection id (a positive integer)")))
            }
            return .success((object, ConnectionID(number)))
        }
    }
}
