import JSON
import Vocabulary
import WebSocket

/// An opaque tunnel through a forward proxy (a `--passthrough` host, or TLS with no CA to
/// intercept it): the proxy sees bytes, not frames, so it records when the tunnel opened,
/// where it went, and how many bytes went each way when it ended.
public struct TunnelRecord: Sendable, Hashable {
    public enum Event: String, Sendable, Hashable { case open, end }

    public var conn: ConnectionID
    public var t: Micros
    public var event: Event
    /// The client's address (`open`).
    public var client: String?
    /// `host:port` of the CONNECT request.
    public var target: String
    /// Bytes from the client to the target and back (`end`).
    public var bytesUp: Int?
    public var bytesDown: Int?
    /// Why the tunnel opened untouched, or how it ended.
    public var detail: String?

    public init(conn: ConnectionID, t: Micros, event: Event, client: String? = nil, target: String,
                bytesUp: Int? = nil, bytesDown: Int? = nil, detail: String? = nil) {
        self.conn = conn
        self.t = t
        self.event = event
        self.client = client
        self.target = target
        self.bytesUp = bytesUp
        self.bytesDown = bytesDown
        self.detail = detail
    }
}

/// One plain HTTP request and its response relayed by a forward proxy (a channel-auth
/// endpoint, a REST trigger), recorded once the exchange is over. Bodies are kept up to the
/// proxy's limit (`*_len` is the full count), as sent: a chunked body keeps its framing.
public struct HTTPRecord: Sendable, Hashable {
    public var conn: ConnectionID
    public var t: Micros
    /// When the response ended (or the exchange failed).
    public var tEnd: Micros
    public var client: String
    public var method: String
    /// The absolute URL: `https://host:port/path?query`.
    public var url: String
    public var requestHeaders: [HeaderField]
    public var requestBody: [UInt8]
    public var requestLength: Int
    /// Nil when no response head arrived (see `error`).
    public var status: Int?
    public var reason: String?
    public var responseHeaders: [HeaderField]
    public var responseBody: [UInt8]
    public var responseLength: Int
    public var error: String?

    public init(conn: ConnectionID, t: Micros, tEnd: Micros, client: String, method: String, url: String,
                requestHeaders: [HeaderField], requestBody: [UInt8] = [], requestLength: Int = 0,
                status: Int? = nil, reason: String? = nil, responseHeaders: [HeaderField] = [],
                responseBody: [UInt8] = [], responseLength: Int = 0, error: String? = nil) {
        self.conn = conn
        self.t = t
        self.tEnd = tEnd
        self.client = client
        self.method = method
        self.url = url
        self.requestHeaders = requestHeaders
        self.requestBody = requestBody
        self.requestLength = requestLength
        self.status = status
        self.reason = reason
        self.responseHeaders = responseHeaders
        self.responseBody = responseBody
        self.responseLength = responseLength
        self.error = error
    }

    /// The request body as text, when it is UTF-8.
    public var requestText: String? { String(validating: requestBody, as: UTF8.self) }
    public var responseText: String? { String(validating: responseBody, as: UTF8.self) }
}

extension RecordCoding {
    static func encodeTunnel(_ r: TunnelRecord, into line: inout LineBuilder) {
        line.field("type", "tunnel")
        line.field("conn", r.conn)
        line.field("t", r.t)
        line.field("event", r.event.rawValue)
        if let client = r.client { line.field("client", client) }
        line.field("target", r.target)
        if let up = r.bytesUp { line.field("bytes_up", up) }
        if let down = r.bytesDown { line.field("bytes_down", down) }
        if let detail = r.detail { line.field("detail", detail) }
    }

    static func encodeHTTP(_ r: HTTPRecord, into line: inout LineBuilder) {
        line.field("type", "http")
        line.field("conn", r.conn)
        line.field("t", r.t)
        line.field("t_end", r.tEnd)
        line.field("client", r.client)
        line.field("method", r.method)
        line.field("url", r.url)
        line.field("req_headers", headersValue(r.requestHeaders))
        line.field("req_len", r.requestLength)
        encodeBody(r.requestBody, text: "req_body", base64: "req_b64", into: &line)
        if let status = r.status { line.field("status", status) }
        if let reason = r.reason { line.field("reason", reason) }
        if r.status != nil { line.field("resp_headers", headersValue(r.responseHeaders)) }
        line.field("resp_len", r.responseLength)
        encodeBody(r.responseBody, text: "resp_body", base64: "resp_b64", into: &line)
        if let error = r.error { line.field("error", error) }
    }

    private static func headersValue(_ headers: [HeaderField]) -> JSONValue {
        .array(headers.map { .array([.string($0.name), .string($0.value)]) })
    }

    private static func encodeBody(_ body: [UInt8], text: StaticString, base64: StaticString, into line: inout LineBuilder) {
        guard !body.isEmpty else { return }
        if UTF8Check.isValid(body) { line.field(text, utf8: body) } else { line.field(base64, base64: body) }
    }

    static func decodeTunnel(_ f: Fields) throws(RecordDecodingError) -> CaptureRecord {
        let name = try f.string("event")
        guard let event = TunnelRecord.Event(rawValue: name) else {
            throw RecordDecodingError("key \"event\": unknown tunnel event \"\(name)\" (expected open or end)")
        }
        return .tunnel(TunnelRecord(conn: try f.int("conn"), t: try f.int64("t"), event: event,
                                    client: try f.optionalString("client"), target: try f.string("target"),
                                    bytesUp: try f.optionalInt("bytes_up"), bytesDown: try f.optionalInt("bytes_down"),
                                    detail: try f.optionalString("detail")))
    }

    static func decodeHTTP(_ f: Fields) throws(RecordDecodingError) -> CaptureRecord {
        let t = try f.int64("t")
        return .http(HTTPRecord(conn: try f.int("conn"), t: t, tEnd: try f.optionalInt64("t_end") ?? t,
                         client: try f.optionalString("client") ?? "", method: try f.string("method"), url: try f.string("url"),
                         requestHeaders: try f.headers("req_headers"),
                         requestBody: try body(f, text: "req_body", base64: "req_b64"),
                         requestLength: try f.optionalInt("req_len") ?? 0,
                         status: try f.optionalInt("status"), reason: try f.optionalString("reason"),
                         responseHeaders: try f.headers("resp_headers"),
                         responseBody: try body(f, text: "resp_body", base64: "resp_b64"),
                         responseLength: try f.optionalInt("resp_len") ?? 0, error: try f.optionalString("error")))
    }

    private static func body(_ f: Fields, text: String, base64: String) throws(RecordDecodingError) -> [UInt8] {
        if let text = try f.optionalString(text) { return Array(text.utf8) }
        guard let encoded = try f.optionalString(base64) else { return [] }
        guard let bytes = Base64.decode(encoded) else { throw RecordDecodingError("key \"\(base64)\": not valid base64") }
        return bytes
    }
}
