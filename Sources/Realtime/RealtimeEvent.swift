import JSON

/// One Bird/Pusher event as it travelled in a text frame: `{"event":..,"channel":..,"data":..}`.
///
/// `data` is decoded twice when it is a string holding JSON (the Pusher convention), so
/// callers read `socket_id` or `channel` without caring how the sender encoded it.
///
/// That second decoding is deferred: most events are application events from the server
/// whose `data` nobody reads, and parsing it for every one of them cost about a tenth of
/// `faultline analyze`. An event from the decoder keeps the string and parses it on each
/// read of `data` (reads are few: the handshake, subscriptions, a finding's evidence).
/// Equality and hashing go by the decoded value, so a deferred event equals the same
/// event made with `data` given.
public struct RealtimeEvent: Sendable, Hashable {
    /// The event name exactly as sent: "bird:subscribe", "client-typing".
    public var name: String
    /// The envelope's `channel` (server events, client events).
    public var channel: String?
    /// `data` after decoding a JSON string once more, when it held an object or array.
    public var data: JSONValue? {
        get {
            guard let deferredData else { return decodedData }
            return RealtimeDecoder.decodeData(.string(deferredData))
        }
        set {
            decodedData = newValue
            deferredData = nil
        }
    }
    /// `data` as it was on the wire (a string for double-encoded data).
    public var rawData: JSONValue?
    /// What the event means in the protocol, relative to the prefix.
    public var kind: RealtimeEventKind
    private var decodedData: JSONValue?
    /// The string `data` decodes from, while it is not decoded yet.
    private var deferredData: String?

    public init(name: String, channel: String?, data: JSONValue?, rawData: JSONValue?, kind: RealtimeEventKind) {
        self.name = name
        self.channel = channel
        self.decodedData = data
        self.rawData = rawData
        self.kind = kind
    }

    /// An event whose `data` is `dataText` decoded once more, decoded when read.
    init(name: String, channel: String?, dataText: String, rawData: JSONValue?, kind: RealtimeEventKind) {
        self.name = name
        self.channel = channel
        self.deferredData = dataText
        self.rawData = rawData
        self.kind = kind
    }

    public static func == (a: RealtimeEvent, b: RealtimeEvent) -> Bool {
        a.name == b.name && a.channel == b.channel && a.kind == b.kind && a.rawData == b.rawData && a.data == b.data
    }

    public func hash(into hasher: inout Hasher) {
        hasher.combine(name)
        hasher.combine(channel)
        hasher.combine(kind)
        hasher.combine(rawData)
        hasher.combine(data)
    }

    /// `socket_id` of a `connection_established` handshake.
    public var socketID: String? { data?["socket_id"]?.stringValue }

    /// `activity_timeout` of the handshake, in seconds.
    public var activityTimeout: Double? { data?["activity_timeout"]?.doubleValue }

    /// The channel a subscribe/unsubscribe names in its data, else the envelope's channel.
    public var targetChannel: String? { data?["channel"]?.stringValue ?? channel }

    /// `auth` of a subscribe or sign-in: "APP_KEY:HEX_SIG".
    public var auth: String? { data?["auth"]?.stringValue }

    /// `channel_data` of a presence subscribe (a JSON string, kept as sent).
    public var channelData: String? { data?["channel_data"]?.stringValue }

    /// `user_data` of a sign-in (a JSON string, kept as sent).
    public var userData: String? { data?["user_data"]?.stringValue }

    /// `code` of an error event.
    public var errorCode: Int64? { data?["code"]?.intValue }
}

/// The protocol meaning of an event name, with the prefix already stripped.
public enum RealtimeEventKind: String, Sendable, Hashable {
    case connectionEstablished = "connection_established"
    case ping, pong, error
    case subscribe, unsubscribe
    case subscriptionSucceeded = "subscription_succeeded"
    case subscriptionError = "subscription_error"
    case signin
    case signinSuccess = "signin_success"
    case memberAdded = "member_added"
    case memberRemoved = "member_removed"
    /// `client-NAME`: sent by a client on a private or presence channel.
    case clientEvent = "client_event"
    /// Any other event: an application event from the server, or an unknown protocol event.
    case other

    /// Events that need the connection's socket ID, so may not come before the handshake.
    public var needsHandshake: Bool { self == .subscribe || self == .signin || self == .clientEvent }
}
