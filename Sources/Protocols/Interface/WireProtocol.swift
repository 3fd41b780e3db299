import WebSocket
import Vocabulary

/// What a wire protocol offers Faultline, in the manner of a Wireshark dissector: each
/// protocol spoken inside WebSocket messages is one entry of `ProtocolTable`, registered
/// under a key and chosen by the lifecycle spec (its `events` setting, and `prefix` for
/// Bird/Pusher's dialect) or, with no spec, by detection (`ProtocolDetector`: each entry's
/// claims on the upgrade request and the first messages). The relay decodes each text
/// message's event once through the entry and the frame's record carries it; faults, the
/// live view and the analyzer read the event's `kind` and `channel` from there, and ask
/// the entry for what only it knows (rewriting its handshake, checking its auth).
///
/// Entries never know each other. Today's entries:
/// - `websocket` (`ConnectionLevelProtocol`): decodes nothing; specs that see only TCP
///   opens, upgrades, closes and ends.
/// - `bird` (module `Bird`): Bird Realtime and every Pusher-protocol server (prefix
///   `bird`, `pusher`, or any other its handshake names), with its HMAC auth.
///
/// Later entries fit the same shape: Socket.IO (engine.io packet type, then `["event",
/// data]`), Phoenix Channels (`[join_ref, ref, topic, event, payload]`, `phx_join` a
/// subscribe, `heartbeat` a ping) and graphql-ws (`connection_init`/`connection_ack`,
/// `subscribe`, `ping`/`pong`) each map their messages onto `RealtimeEventKind` and decode
/// with `JSONSkimmer`; see docs/protocols.md.
public protocol WireProtocol: Sendable {
    /// The table key ("bird", "websocket").
    static var key: String { get }
    /// One line saying what the entry decodes, for docs and `faultline specs`.
    static var summary: String { get }
    /// Why this entry speaks the connection whose upgrade request this is (a
    /// `Sec-WebSocket-Protocol` it owns, its URL path or query), or nil: no claim. Only a
    /// sign that belongs to this protocol alone may claim; detection asks every entry.
    static func claim(upgrade: UpgradeEvidence) -> String?
    /// Why this entry speaks the connection that carried this complete text message (one
    /// of the first few), or nil: no claim. A heuristic (Wireshark's "heuristic
    /// dissectors"): claim only a message no other protocol would send.
    static func claim(message payload: [UInt8]) -> String?
    /// The dialect in use once given or learned (Bird's event prefix); nil until then.
    var dialect: String? { get }
    /// The event a complete text message carries, nil when it carries none. Learns the
    /// dialect from the events that reveal it.
    mutating func decode(_ payload: [UInt8]) -> RealtimeEvent?
    /// An event another instance of this entry decoded (the relay's, carried on the
    /// frame's record), classified under this instance's dialect, which it may teach as
    /// `decode` would; nil where `decode` would have given nil.
    mutating func adopt(_ event: RealtimeEvent) -> RealtimeEvent?
    /// The handshake message `payload` (whose decoded event is `event`, of kind
    /// `.connectionEstablished`) with `change` made, for the faults `strip-socket-id` and
    /// `activity-timeout`; nil when this entry's handshake carries no such field or the
    /// payload cannot be rewritten (it is then relayed as is).
    func rewriteHandshake(_ payload: [UInt8], event: RealtimeEvent, _ change: HandshakeChange) -> HandshakeRewrite?
    /// Whether `event`'s auth is the signature the app's secret makes for this connection's
    /// `socketID` (`analyze --app-secret`); nil when the event carries no auth this entry signs.
    func checkAuth(of event: RealtimeEvent, socketID: String, secret: String) -> AuthCheck?
    /// Auth re-signed for a new connection's socket id (a replay sends recorded messages
    /// on a new connection); the payload unchanged when it carries no auth to sign.
    func resign(_ payload: [UInt8], socketID: String, secret: String) -> [UInt8]
    /// The message fields that differ between two runs of one session by their nature (a
    /// signature over the connection's id, the id itself), for `replay`'s comparison of
    /// recorded and live messages. Empty (the default) for a protocol without such fields.
    static var volatileFields: VolatileFields { get }
}

extension WireProtocol {
    public static func claim(upgrade: UpgradeEvidence) -> String? { nil }
    public static func claim(message payload: [UInt8]) -> String? { nil }
    public func rewriteHandshake(_ payload: [UInt8], event: RealtimeEvent, _ change: HandshakeChange) -> HandshakeRewrite? {
        nil
    }
    public func checkAuth(of event: RealtimeEvent, socketID: String, secret: String) -> AuthCheck? { nil }
    public func resign(_ payload: [UInt8], socketID: String, secret: String) -> [UInt8] { payload }
    public static var volatileFields: VolatileFields { VolatileFields() }
}

/// Fields of a protocol's JSON messages that differ between runs of the same session,
/// named as they appear at any depth (inside JSON held in strings too).
public struct VolatileFields: Sendable, Hashable {
    /// Never compared: values nobody can predict (a signature over the live socket id).
    public var ignored: Set<String>
    /// Compared through a mapping learnt on first sight: the recorded value stands for the
    /// live one from then on (the socket id the live handshake gave).
    public var mapped: Set<String>

    public init(ignored: Set<String> = [], mapped: Set<String> = []) {
        self.ignored = ignored
        self.mapped = mapped
    }
}

/// What a handshake fault changes in the server's handshake event.
public enum HandshakeChange: Sendable, Hashable {
    /// Remove the connection's socket id (`strip-socket-id`).
    case removeSocketID
    /// Set the activity timeout, in whole seconds (`activity-timeout:SECONDS`).
    case activityTimeout(seconds: Int)
}

/// A rewritten handshake: the new payload and what the field held before (its JSON text,
/// a string's own text), nil when it was absent, for the fault's report.
public struct HandshakeRewrite: Sendable, Hashable {
    public var payload: [UInt8]
    public var previous: String?

    public init(payload: [UInt8], previous: String?) {
        self.payload = payload
        self.previous = previous
    }
}

/// The verdict on one event's auth: what was signed ("subscribe private-x", "signin"),
/// the auth as sent, and whether it is the expected signature.
public struct AuthCheck: Sendable, Hashable {
    public var what: String
    public var auth: String
    public var valid: Bool

    public init(what: String, auth: String, valid: Bool) {
        self.what = what
        self.auth = auth
        self.valid = valid
    }
}

/// What a connection's upgrade request tells detection: the request target (path and
/// query, as sent) and the subprotocols the client offered in `Sec-WebSocket-Protocol`.
/// The path and query are split once, here: every registered entry's claim reads them
/// (each new client's upgrade is offered to all), and splitting the target on each read
/// cost some 3,400 instructions a claim (callgrind, a Bird capture: 5% of a 40,000-line
/// slice's analysis, in `query` alone).
public struct UpgradeEvidence: Sendable, Hashable {
    public let target: String
    public let subprotocols: [String]
    /// The path without the query.
    public let path: Substring
    /// The query's `name=value` pairs, as sent (not percent-decoded).
    public let query: [(name: Substring, value: Substring)]

    public init(target: String, subprotocols: [String] = []) {
        self.target = target
        self.subprotocols = subprotocols
        (path, query) = Self.split(target)
    }

    /// From the request's headers: every comma-separated `Sec-WebSocket-Protocol` value.
    public init(target: String, headers: [HeaderField]) {
        self.init(target: target,
                  subprotocols: headers.values(named: "Sec-WebSocket-Protocol")
                      .flatMap { $0.split(separator: ",") }
                      .map { String($0).trimmingASCIISpaces() }
                      .filter { !$0.isEmpty })
    }

    /// An ASCII target (every request target on the wire) is split on its bytes: by
    /// characters, as `Substring.split` goes, it was some 37,000 instructions a request, and
    /// the per-client detection makes one for every client of an input. Beyond ASCII, by
    /// characters as before (a `&` followed by a combining mark is no character of its own).
    private static func split(_ target: String) -> (path: Substring, query: [(name: Substring, value: Substring)]) {
        let bytes = target.utf8
        guard target.isASCIIOnly else { return splitByCharacters(target) }
        guard let mark = bytes.firstIndex(of: UInt8(ascii: "?")) else { return (target[...], []) }
        var query: [(name: Substring, value: Substring)] = []
        var pairStart = bytes.index(after: mark)
        while pairStart < bytes.endIndex {
            let pairEnd = bytes[pairStart...].firstIndex(of: UInt8(ascii: "&")) ?? bytes.endIndex
            if pairStart < pairEnd {  // empty pairs ("a&&b") are skipped, as split skipped them
                if let equals = bytes[pairStart..<pairEnd].firstIndex(of: UInt8(ascii: "=")) {
                    query.append((name: target[pairStart..<equals], value: target[bytes.index(after: equals)..<pairEnd]))
                } else {
                    query.append((name: target[pairStart..<pairEnd], value: ""))
                }
            }
            pairStart = pairEnd == bytes.endIndex ? pairEnd : bytes.index(after: pairEnd)
        }
        return (target[..<mark], query)
    }

    private static func splitByCharacters(_ target: String) -> (path: Substring, query: [(name: Substring, value: Substring)]) {
        guard let mark = target.firstIndex(of: "?") else { return (target[...], []) }
        let query = target[target.index(after: mark)...].split(separator: "&").map { pair in
            let parts = pair.split(separator: "=", maxSplits: 1, omittingEmptySubsequences: false)
            return (name: parts[0], value: parts.count > 1 ? parts[1] : "")
        }
        return (target[..<mark], query)
    }

    /// The path and query follow from the target.
    public static func == (a: Self, b: Self) -> Bool {
        a.target == b.target && a.subprotocols == b.subprotocols
    }

    public func hash(into hasher: inout Hasher) {
        hasher.combine(target)
        hasher.combine(subprotocols)
    }
}

extension String {
    fileprivate func trimmingASCIISpaces() -> String {
        let bytes = utf8.drop { $0 == 0x20 || $0 == 0x09 }
        return String(decoding: bytes.reversed().drop { $0 == 0x20 || $0 == 0x09 }.reversed(), as: UTF8.self)
    }
}

/// The generic connection-level entry (spec `events: connection`): no application
/// protocol is read, so no message carries an event.
public struct ConnectionLevelProtocol: WireProtocol {
    public static let key = "websocket"
    public static let summary = "any WebSocket client at connection level: no message is decoded"
    public var dialect: String? { nil }

    public init() {}

    public func decode(_ payload: [UInt8]) -> RealtimeEvent? { nil }
    public func adopt(_ event: RealtimeEvent) -> RealtimeEvent? { nil }
}
