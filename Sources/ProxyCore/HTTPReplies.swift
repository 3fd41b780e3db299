import WebSocket

/// The proxy's own HTTP answers: plain text bodies that say what went wrong, and
/// `Connection: close`, since the socket closes after them.
enum HTTPReplies {
    static let reasons: [Int: String] = [
        400: "Bad Request", 403: "Forbidden", 404: "Not Found", 405: "Method Not Allowed", 408: "Request Timeout",
        426: "Upgrade Required", 429: "Too Many Requests", 431: "Request Header Fields Too Large",
        500: "Internal Server Error", 502: "Bad Gateway", 503: "Service Unavailable", 504: "Gateway Timeout",
        508: "Loop Detected",
    ]

    static func reason(for status: Int) -> String {
        reasons[status] ?? (status < 500 ? "Client Error" : "Server Error")
    }

    static func response(status: Int, body: String, extraHeaders: [HeaderField] = []) -> [UInt8] {
        reply(status: status, body: body, extraHeaders: extraHeaders).bytes
    }

    /// The reply's head (to record it) and its bytes (to send them).
    static func reply(status: Int, body: String, extraHeaders: [HeaderField] = []) -> (head: HTTPResponseHead, bytes: [UInt8]) {
        let bodyBytes = Array((body.hasSuffix("\n") ? body : body + "\n").utf8)
        let head = HTTPResponseHead(status: status, reason: reason(for: status), headers: extraHeaders + [
            HeaderField("Content-Type", "text/plain; charset=utf-8"),
            HeaderField("Content-Length", String(bodyBytes.count)),
            HeaderField("Connection", "close"),
        ])
        return (head, head.serialized + bodyBytes)
    }

    /// Why `request` is not a WebSocket upgrade, as a status, a message and extra headers.
    static func rejection(of request: HTTPRequestHead) -> (status: Int, message: String, headers: [HeaderField]) {
        let expected = "expected a WebSocket upgrade (GET with Upgrade: websocket, Connection: Upgrade, Sec-WebSocket-Key, Sec-WebSocket-Version: 13)"
        if request.method != "GET" {
            return (405, "faultline: \(request.method) \(request.target): this is a WebSocket proxy; \(expected)",
                    [HeaderField("Allow", "GET")])
        }
        let upgrade = request.headers.first(named: "Upgrade")?.lowercased() ?? ""
        if !upgrade.contains("websocket") {
            return (426, "faultline: GET \(request.target) without Upgrade: websocket; this is a WebSocket proxy; \(expected)",
                    [HeaderField("Upgrade", "websocket"), HeaderField("Sec-WebSocket-Version", "13")])
        }
        var missing: [String] = []
        if !(request.headers.first(named: "Connection")?.lowercased().contains("upgrade") ?? false) { missing.append("Connection: Upgrade") }
        if request.headers.first(named: "Sec-WebSocket-Key") == nil { missing.append("Sec-WebSocket-Key") }
        if request.headers.first(named: "Sec-WebSocket-Version")?.trimmingCharacters(in: " ") != "13" {
            missing.append("Sec-WebSocket-Version: 13")
        }
        let detail = missing.isEmpty ? "" : " (missing or wrong: \(missing.joined(separator: ", ")))"
        return (400, "faultline: incomplete WebSocket upgrade request\(detail); this is a WebSocket proxy; \(expected)",
                [HeaderField("Sec-WebSocket-Version", "13")])
    }
}

extension String {
    func trimmingCharacters(in set: Character) -> String {
        var slice = Substring(self)
        while slice.first == set { slice.removeFirst() }
        while slice.last == set { slice.removeLast() }
        return String(slice)
    }
}
