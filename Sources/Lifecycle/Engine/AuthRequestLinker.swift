import Capture
import JSON
import Protocols
import Vocabulary

/// An HTTP channel-auth exchange (forward mode's `http` record) and the subscribe that sent
/// its signature: how a stale-auth finding is diagnosed (which request signed what, when).
public struct AuthRequestLink: Sendable, Hashable {
    /// The `http` record's connection, time, method, URL and status.
    public var httpConn: ConnectionID
    public var t: Micros
    public var method: String
    public var url: String
    public var status: Int?
    /// The WebSocket connection and time of the subscribe that carried the signature.
    public var conn: ConnectionID
    public var subscribeT: Micros
    public var channel: String?
}

/// Pairs channel-auth responses (an `http` record whose JSON body has an `"auth"` string)
/// with the client subscribes whose auth is that same string: the events the protocol
/// table entry `wire` decodes as `.subscribe`, under any dialect. Pure and streaming;
/// costs nothing on captures without `http` records (frames are decoded only once an auth
/// response has been seen, or when the relay's decoding rides on the record). Bounded: at
/// most `limit` auth responses are remembered (the oldest forgotten) and `limit` links kept.
public struct AuthRequestLinker: Sendable {
    public static let limit = 1000
    /// Larger messages are not decoded (events are small).
    static let maxDecodedPayload = 64 * 1024
    private var wire: any WireProtocol
    private var responses: [String: HTTPRecord] = [:]
    private var order: [String] = []
    public private(set) var links: [AuthRequestLink] = []

    /// `wire`: the entry the spec (or detection) chose, the one the analyzer decodes with.
    public init(wire: any WireProtocol) {
        self.wire = wire
    }

    public mutating func observe(_ record: CaptureRecord) {
        switch record {
        case .http(let http):
            guard let auth = Self.authField(of: http) else { return }
            if responses[auth] == nil {
                order.append(auth)
                if order.count > Self.limit { responses[order.removeFirst()] = nil }
            }
            responses[auth] = http
        case .frame(let frame):
            guard !responses.isEmpty, frame.from == .client, frame.opcode == .text, frame.fin,
                  links.count < Self.limit, frame.payload.count <= Self.maxDecodedPayload,
                  let event = wire.event(of: frame), event.kind == .subscribe,
                  let auth = event.auth, let http = responses[auth] else { return }
            links.append(AuthRequestLink(httpConn: http.conn, t: http.t, method: http.method, url: http.url,
                                         status: http.status, conn: frame.conn, subscribeT: frame.t,
                                         channel: event.targetChannel))
        default:
            return
        }
    }

    /// The `auth` string of a successful JSON response, if any.
    static func authField(of http: HTTPRecord) -> String? {
        guard let status = http.status, (200..<300).contains(status), http.responseBody.first == UInt8(ascii: "{"),
              case .object(let body)? = try? JSONParser.parse(http.responseBody) else { return nil }
        return body["auth"]?.stringValue
    }
}
