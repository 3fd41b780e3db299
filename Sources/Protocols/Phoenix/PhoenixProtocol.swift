import Protocols

/// The Phoenix Channels entry of the protocol table: decodes V2 arrays `[join_ref, ref,
/// topic, event, payload]` and V1 objects onto `RealtimeEventKind`. The topic is the
/// event's channel, the message's `ref` its `ref` (a heartbeat's reply carries the
/// heartbeat's ref, so the liveness model matches them).
///
/// - `heartbeat` on topic `phoenix`: a ping; `phx_reply` on topic `phoenix`: its pong.
/// - `phx_join`: a subscribe to the topic; the `phx_reply` to it (its `ref` is the join's:
///   V2 sends `join_ref == ref`, V1 is matched to the join seen on that topic) with
///   status `ok` a subscription succeeded, with any other status a subscription error.
/// - `phx_leave`: an unsubscribe; `phx_close` (the server ended the channel) too.
/// - `phx_error` (the channel crashed): an error.
/// - Any other event: a client event when it carries a ref (only a client's push does),
///   else a server event (`other`); a `phx_reply` to a push is `other` too.
///
/// Phoenix has no handshake message (the socket is up at the 101) and no socket id, so the
/// handshake faults leave it alone.
public struct PhoenixProtocol: WireProtocol {
    public static let key = "phoenix"
    public static let summary = "Phoenix Channels V1 objects and V2 arrays (phx_join, phx_reply, heartbeat on topic phoenix)"
    /// The topic heartbeats travel on.
    public static let socketTopic = "phoenix"
    /// How many topics' pending joins are remembered to match V1 replies (refs are per
    /// join; a client with more topics than this has its oldest join replies read as
    /// replies to pushes).
    public static let pendingJoinLimit = 1024

    /// Phoenix has no dialect the engines need: each message shows its serializer.
    public var dialect: String? { nil }
    /// The ref of each topic's latest join not yet answered.
    private var pendingJoins: [String: String] = [:]

    public init() {}

    public mutating func decode(_ payload: [UInt8]) -> RealtimeEvent? {
        guard let message = PhoenixMessage.parse(payload) else { return nil }
        var event = RealtimeEvent(name: message.event, channel: message.topic, dataJSON: message.payload,
                                  kind: kind(of: message))
        event.ref = message.ref
        return adopt(event)
    }

    /// Learns the joins and their replies from an event decoded by another instance.
    public mutating func adopt(_ event: RealtimeEvent) -> RealtimeEvent? {
        guard let topic = event.channel else { return event }
        switch event.kind {
        case .subscribe:
            if let ref = event.ref, pendingJoins[topic] != nil || pendingJoins.count < Self.pendingJoinLimit {
                pendingJoins[topic] = ref
            }
        case .subscriptionSucceeded, .subscriptionError:
            pendingJoins.removeValue(forKey: topic)
        default:
            break
        }
        return event
    }

    func kind(of message: PhoenixMessage) -> RealtimeEventKind {
        if message.topic == Self.socketTopic {
            switch message.event {
            case "heartbeat": return .ping
            case "phx_reply": return .pong
            default: break
            }
        }
        switch message.event {
        case "phx_join": return .subscribe
        case "phx_leave", "phx_close": return .unsubscribe
        case "phx_error": return .error
        case "phx_reply":
            guard isJoinReply(message) else { return .other }
            return message.replyStatus == "ok" ? .subscriptionSucceeded : .subscriptionError
        default:
            return message.ref == nil ? .other : .clientEvent
        }
    }

    private func isJoinReply(_ message: PhoenixMessage) -> Bool {
        guard let ref = message.ref else { return false }
        if let joinRef = message.joinRef { return joinRef == ref }
        return pendingJoins[message.topic] == ref
    }
}
