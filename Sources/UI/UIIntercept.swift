import ControlAPI
import JSON
import Vocabulary

/// The page's intercept, spoken through the control API's `/intercept` endpoints (the same
/// ones `curl` and `faultline ctl` reach): the page's messages turned into requests, and
/// `GET /intercept`'s answer cut down to the connection the page shows.
enum UIIntercept {
    static let actions: Set<String> = ["pause", "resume", "decide"]

    /// The control request for a page's intercept message (`UIActions` documents them).
    static func request(for message: JSONValue) -> ControlRequest {
        let conn = message["conn"]?.intValue.flatMap { $0 > 0 && $0 <= Int64(Int32.max) ? $0 : nil }
        var body = JSONObject()
        let path: String
        switch message["action"]?.stringValue {
        case "pause":
            if message["scope"]?.stringValue != "all", let conn { body["conn"] = .int(conn) }
            if let from = message["from"]?.stringValue, !from.isEmpty { body["from"] = .string(from) }
            if let match = message["match"]?.stringValue, !match.isEmpty { body["match"] = .string(match) }
            if let timeout = message["timeout"]?.stringValue { body["timeout"] = .string(timeout) }
            path = "/intercept"
        case "resume":
            if message["scope"]?.stringValue != "all", let conn { body["conn"] = .int(conn) }
            path = "/intercept/resume"
        default:
            body["action"] = message["decision"] ?? .null
            if let text = message["text"] { body["text"] = text }
            if let b64 = message["b64"] { body["b64"] = b64 }
            let held = message["held"]?.intValue.map(String.init) ?? "0"
            path = "/intercept/\(conn.map(String.init) ?? "0")/\(held)"
        }
        var bytes: [UInt8] = []
        JSONWriter.write(.object(body), into: &bytes)
        return ControlRequest(method: "POST", path: path, body: bytes)
    }

    /// `{"conn", "pause": {...} | null, "held": [...]}` for `conn`, from `GET /intercept`.
    static func state(of response: ControlResponse, conn: ConnectionID) -> JSONValue? {
        guard response.status == 200, let body = response.jsonBody else { return nil }
        let pauses = body["pauses"]?.arrayValue ?? []
        let own = pauses.first { $0["conn"]?.intValue == Int64(conn) } ?? pauses.first { $0["conn"] == .null }
        let held = (body["held"]?.arrayValue ?? []).filter { $0["conn"]?.intValue == Int64(conn) }
        return ["conn": .int(Int64(conn)), "pause": own ?? .null, "held": .array(held)]
    }
}
