import JSON
import WebSocket

/// One HTTP request to the control API, as the router sees it: no sockets, no parsing left.
public struct ControlRequest: Sendable, Hashable {
    public var method: String
    /// The path without the query: "/rules/3".
    public var path: String
    /// The raw query after "?", empty when there is none.
    public var query: String
    public var headers: [HeaderField]
    public var body: [UInt8]

    public init(method: String, path: String, query: String = "", headers: [HeaderField] = [], body: [UInt8] = []) {
        self.method = method
        self.path = path
        self.query = query
        self.headers = headers
        self.body = body
    }

    /// Splits a request target ("/rules?x=1") into path and query.
    public init(method: String, target: String, headers: [HeaderField] = [], body: [UInt8] = []) {
        if let mark = target.firstIndex(of: "?") {
            self.init(method: method, path: String(target[..<mark]), query: String(target[target.index(after: mark)...]),
                      headers: headers, body: body)
        } else {
            self.init(method: method, path: target, headers: headers, body: body)
        }
    }
}

/// The router's answer: status, headers and body (JSON, or Prometheus text for /metrics).
public struct ControlResponse: Sendable, Hashable {
    public var status: Int
    public var headers: [HeaderField]
    public var body: [UInt8]

    public init(status: Int, headers: [HeaderField] = [], body: [UInt8] = []) {
        self.status = status
        self.headers = headers
        self.body = body
    }

    /// A JSON body, serialized compactly with a trailing newline (so curl output ends cleanly).
    public static func json(_ status: Int, _ value: JSONValue, headers: [HeaderField] = []) -> ControlResponse {
        var body: [UInt8] = []
        JSONWriter.write(value, into: &body)
        body.append(10)
        return ControlResponse(status: status, headers: [HeaderField("Content-Type", "application/json")] + headers, body: body)
    }

    /// `{"error": message, "status": status}` plus any extra members.
    public static func error(_ status: Int, _ message: String, extra: [(key: String, value: JSONValue)] = [],
                             headers: [HeaderField] = []) -> ControlResponse {
        json(status, .object(JSONObject([("error", .string(message)), ("status", .int(Int64(status)))] + extra)),
             headers: headers)
    }

    /// The parsed JSON body, when it is JSON.
    public var jsonBody: JSONValue? { try? JSONParser.parse(body) }

    /// The standard reason phrase for the statuses this API uses.
    public static func reason(_ status: Int) -> String {
        switch status {
        case 100: "Continue"
        case 200: "OK"
        case 201: "Created"
        case 204: "No Content"
        case 400: "Bad Request"
        case 401: "Unauthorized"
        case 403: "Forbidden"
        case 404: "Not Found"
        case 405: "Method Not Allowed"
        case 408: "Request Timeout"
        case 409: "Conflict"
        case 413: "Content Too Large"
        case 415: "Unsupported Media Type"
        case 431: "Request Header Fields Too Large"
        case 500: "Internal Server Error"
        case 501: "Not Implemented"
        case 503: "Service Unavailable"
        default: "Status \(status)"
        }
    }
}
