import JSON

/// One event of a realtime protocol as it travelled in a text message, decoded by the
/// protocol's table entry (`WireProtocol`): its name, its channel, what it means
/// (`kind`), and its `data` with the few fields the lifecycle rules read (socket id,
/// activity timeout, target channel, auth, channel and user data, error code).
///
/// Decoding is byte-level: an entry keeps `data` as the JSON text it was sent as (a slice
/// of the frame's payload, no copy) and each field is found in those bytes when read, by
/// `JSONSkimmer`. A JSON tree is built only when `data` or `rawData` itself is read (a
/// finding's evidence, the live view's error lines). `data` is decoded twice when it is a
/// string holding JSON (the Pusher convention), so callers read `socket_id` or `channel`
/// without caring how the sender encoded it. Equality and hashing go by the decoded value,
/// so an event decoded from bytes equals the same event made with `data` given.
public struct RealtimeEvent: Sendable, Hashable {
    /// The event name exactly as sent: "bird:subscribe", "client-typing".
    public var name: String
    /// The envelope's `channel` (server events, client events).
    public var channel: String?
    /// What the event means in the protocol, relative to its dialect (Bird's prefix).
    public var kind: RealtimeEventKind
    /// The message's reference, for protocols that match a reply to its request by one
    /// (Phoenix's `ref`: a heartbeat's reply carries the heartbeat's ref). Set by the entry.
    public var ref: String? = nil
    /// The keep-alive schedule the server announced in this message, for protocols whose
    /// open packet carries one (engine.io's `pingInterval` + `pingTimeout`). Set by the entry.
    public var liveness: AnnouncedLiveness? = nil
    /// What this server message says about the session it ends, for protocols whose server
    /// ends sessions by a message (`SessionEnding`). Set by the entry.
    public var ending: SessionEnding? = nil
    private var source: DataSource

    /// Where `data` comes from.
    private enum DataSource: Sendable {
        /// Given as values (tests, the JSON-tree path for rare envelopes).
        case values(data: JSONValue?, raw: JSONValue?)
        /// The JSON text of the envelope's `data` member, validated by the decoder.
        case text(ArraySlice<UInt8>)
        /// No `data` member.
        case none
    }

    public init(name: String, channel: String?, data: JSONValue?, rawData: JSONValue?, kind: RealtimeEventKind) {
        self.name = name
        self.channel = channel
        self.source = .values(data: data, raw: rawData)
        self.kind = kind
    }

    /// An event whose `data` is the JSON text `dataJSON` (nil: the envelope had none).
    /// `dataJSON` must be one valid JSON value (the decoder's skim checked it).
    public init(name: String, channel: String?, dataJSON: ArraySlice<UInt8>?, kind: RealtimeEventKind) {
        self.name = name
        self.channel = channel
        self.source = dataJSON.map { .text($0) } ?? .none
        self.kind = kind
    }

    /// `data` after decoding a JSON string once more, when it held an object or array.
    public var data: JSONValue? {
        get {
            switch source {
            case .values(let data, _): return data
            case .text: return Self.decodedOnceMore(rawData)
            case .none: return nil
            }
        }
        set { source = .values(data: newValue, raw: rawData) }
    }

    /// `data` as it was on the wire (a string for double-encoded data).
    public var rawData: JSONValue? {
        get {
            switch source {
            case .values(_, let raw): return raw
            case .text(let bytes): return try? JSONParser.parse(bytes)
            case .none: return nil
            }
        }
        set { source = .values(data: data, raw: newValue) }
    }

    public static func == (a: RealtimeEvent, b: RealtimeEvent) -> Bool {
        a.name == b.name && a.channel == b.channel && a.kind == b.kind && a.ref == b.ref && a.liveness == b.liveness && a.ending == b.ending
            && a.rawData == b.rawData && a.data == b.data
    }

    public func hash(into hasher: inout Hasher) {
        hasher.combine(name)
        hasher.combine(channel)
        hasher.combine(kind)
        hasher.combine(ref)
        hasher.combine(liveness)
        hasher.combine(ending)
        hasher.combine(rawData)
        hasher.combine(data)
    }

    /// `socket_id` of a `connection_established` handshake.
    public var socketID: String? { dataMember("socket_id")?.stringValue }

    /// `activity_timeout` of the handshake, in seconds.
    public var activityTimeout: Double? { dataMember("activity_timeout")?.doubleValue }

    /// `socketID` and `activityTimeout` at once: Pusher's double-encoded data is decoded
    /// once for both, where reading them one by one decoded it twice (every connection's
    /// handshake reads both).
    public var handshakeFields: (socketID: String?, activityTimeout: Double?) {
        let (socketID, activityTimeout) = dataMembers("socket_id", "activity_timeout")
        return (socketID?.stringValue, activityTimeout?.doubleValue)
    }

    /// The channel a subscribe/unsubscribe names in its data, else the envelope's channel.
    public var targetChannel: String? { dataMember("channel")?.stringValue ?? channel }

    /// `auth` of a subscribe or sign-in: "APP_KEY:HEX_SIG".
    public var auth: String? { dataMember("auth")?.stringValue }

    /// `channel_data` of a presence subscribe (a JSON string, kept as sent).
    public var channelData: String? { dataMember("channel_data")?.stringValue }

    /// `user_data` of a sign-in (a JSON string, kept as sent).
    public var userData: String? { dataMember("user_data")?.stringValue }

    /// `code` of an error event.
    public var errorCode: Int64? { dataMember("code")?.intValue }

    /// `data[key]` (after the second decoding), found in the bytes without a tree of `data`.
    public func dataMember(_ key: StaticString) -> JSONValue? { dataMembers(key, nil).0 }

    /// `data[first]` and `data[second]` (nil: not looked for), found in one pass.
    func dataMembers(_ first: StaticString, _ second: StaticString?) -> (JSONValue?, JSONValue?) {
        switch source {
        case .values(let data, _): return (data?[first.description], second.flatMap { data?[$0.description] })
        case .none: return (nil, nil)
        case .text(let bytes):
            guard let opening = bytes.first else { return (nil, nil) }
            if opening == UInt8(ascii: "{") { return Self.members(first, second, ofObject: bytes) }
            guard opening == UInt8(ascii: "\"") else { return (nil, nil) }
            // A string's text spells a member's key as it is, or with `\u` escapes: holding
            // neither, it has no such member, and the parse of the string is saved (most
            // application events' data is asked for a `channel` it does not hold).
            guard Self.mayName(first, bytes) || second.map({ Self.mayName($0, bytes) }) == true else { return (nil, nil) }
            // A string: its text decoded once more when it holds an object.
            guard case .string(let text)? = try? JSONParser.parse(bytes), Self.mayHoldJSON(text) else { return (nil, nil) }
            return Self.members(first, second, ofObject: Array(text.utf8)[...])
        }
    }

    /// Whether the JSON text `bytes` may hold the key `key`: it holds the key's bytes, or a
    /// `\u` escape that could spell them. False means it surely holds no such key.
    static func mayName(_ key: StaticString, _ bytes: ArraySlice<UInt8>) -> Bool {
        guard key.hasPointerRepresentation else { return true }
        let name = UnsafeBufferPointer(start: key.utf8Start, count: key.utf8CodeUnitCount)
        guard let head = name.first else { return true }
        var i = bytes.startIndex
        while i < bytes.endIndex {
            let byte = bytes[i]
            if byte == UInt8(ascii: "\\"), i + 1 < bytes.endIndex, bytes[i + 1] == UInt8(ascii: "u") { return true }
            if byte == head, bytes.endIndex - i >= name.count, bytes[i..<(i + name.count)].elementsEqual(name) { return true }
            i += 1
        }
        return false
    }

    /// The first members `first` and `second` (nil: not looked for) of the object `bytes`
    /// holds; nil for each when `bytes` is no object, is not valid JSON, or has no such member.
    static func members(_ first: StaticString, _ second: StaticString?,
                        ofObject bytes: ArraySlice<UInt8>) -> (JSONValue?, JSONValue?) {
        // The array of keys made in each branch (a literal the optimizer can keep off the
        // heap), not by `map`: `targetChannel`, one key, is read on most client frames.
        if let second { return members(keys: [first, second], ofObject: bytes) }
        return members(keys: [first], ofObject: bytes)
    }

    /// The first two of `keys` (one or two) as `members(_:_:ofObject:)` gives them.
    @inline(__always)
    private static func members(keys: [StaticString], ofObject bytes: ArraySlice<UInt8>) -> (JSONValue?, JSONValue?) {
        bytes.withUnsafeBufferPointer { buffer -> (JSONValue?, JSONValue?) in
            let outcome = JSONSkimmer.members(of: buffer, named: keys)
            let tree = outcome == .needsParser ? try? JSONParser.parse(buffer) : nil
            func value(_ index: Int) -> JSONValue? {
                guard index < keys.count else { return nil }
                switch outcome {
                case .notAnObject:
                    return nil
                case .needsParser:
                    return tree?[keys[index].description]
                case .members(let members):
                    guard let span = members[index] else { return nil }
                    if span.isString, !span.escaped {
                        return .string(String(decoding: UnsafeBufferPointer(rebasing: buffer[span.content]), as: UTF8.self))
                    }
                    return try? JSONParser.parse(UnsafeBufferPointer(rebasing: buffer[span.range]))
                }
            }
            return (value(0), value(1))
        }
    }

    /// The Pusher convention: a string `data` holding an object or array is decoded once more.
    public static func decodedOnceMore(_ raw: JSONValue?) -> JSONValue? {
        guard case .string(let text)? = raw, mayHoldJSON(text), let inner = try? JSONParser.parse(text) else { return raw }
        return inner
    }

    /// A string whose first non-blank character opens an object or array.
    public static func mayHoldJSON(_ text: String) -> Bool {
        guard let first = text.utf8.first(where: { !isJSONWhitespace($0) }) else { return false }
        return first == UInt8(ascii: "{") || first == UInt8(ascii: "[")
    }
}

/// A server's keep-alive schedule as its protocol announces it, in seconds as decoded (the
/// entry converts its protocol's unit): it pings every `pingInterval` and a client that
/// hears no ping for `pingInterval + pingTimeout` may give the connection up.
public struct AnnouncedLiveness: Sendable, Hashable {
    public var pingInterval: Double
    public var pingTimeout: Double
    public init(pingInterval: Double, pingTimeout: Double) {
        self.pingInterval = pingInterval
        self.pingTimeout = pingTimeout
    }
}

@inlinable
func isJSONWhitespace(_ byte: UInt8) -> Bool {
    byte == 0x20 || byte == 0x09 || byte == 0x0A || byte == 0x0D
}

/// The protocol meaning of an event name, with the dialect's prefix already stripped. The
/// names are Pusher's; another protocol's entry maps its own events onto them (Phoenix's
/// `phx_join` is a subscribe, graphql-ws's `connection_ack` a connection established).
public enum RealtimeEventKind: String, Sendable, Hashable, CaseIterable {
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
