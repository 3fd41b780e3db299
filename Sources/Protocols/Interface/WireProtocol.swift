/// What a wire protocol offers Faultline, in the manner of a Wireshark dissector: each
/// protocol spoken inside WebSocket messages is one entry of `ProtocolTable`, registered
/// under a key and chosen by the lifecycle spec (its `events` setting, and `prefix` for
/// Bird/Pusher's dialect). The relay decodes each text message's event once through the
/// entry and the frame's record carries it; faults, the live view and the analyzer read it
/// from there.
///
/// Entries never know each other. Today's entries:
/// - `websocket` (`ConnectionLevelProtocol`): decodes nothing; specs that see only TCP
///   opens, upgrades, closes and ends.
/// - `bird` (module `Bird`): Bird Realtime and every Pusher-protocol server (prefix
///   `bird`, `pusher`, ...), with its HMAC auth and the simulator's messages.
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
    /// The dialect in use once given or learned (Bird's event prefix); nil until then.
    var dialect: String? { get }
    /// The event a complete text message carries, nil when it carries none. Learns the
    /// dialect from the events that reveal it.
    mutating func decode(_ payload: [UInt8]) -> RealtimeEvent?
    /// An event another instance of this entry decoded (the relay's, carried on the
    /// frame's record), classified under this instance's dialect, which it may teach as
    /// `decode` would; nil where `decode` would have given nil.
    mutating func adopt(_ event: RealtimeEvent) -> RealtimeEvent?
    /// Auth re-signed for a new connection's socket id (a replay sends recorded messages
    /// on a new connection); the payload unchanged when it carries no auth to sign.
    func resign(_ payload: [UInt8], socketID: String, secret: String) -> [UInt8]
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
    public func resign(_ payload: [UInt8], socketID: String, secret: String) -> [UInt8] { payload }
}
