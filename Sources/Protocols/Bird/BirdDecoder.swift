import JSON
import Protocols

/// The Bird/Pusher entry of the protocol table: decodes events from text payloads
/// (`{"event":..,"channel":..,"data":..}`). Frames that are not events (not JSON, not an
/// object, no string `event`) give nil and stay plain frames for the caller.
///
/// Decoding is byte-level (`JSONSkimmer`): the name and channel are read from the bytes,
/// `data` stays a slice of the payload whose fields are found when read; a tree is built
/// only for the rare envelope with an escaped key.
///
/// The prefix (`bird`, `pusher`, ...) is either given, or learned from the first protocol
/// event seen (normally `PREFIX:connection_established`, the first event of a connection).
public struct BirdDecoder: WireProtocol {
    public static let key = "bird"
    public static let summary = "Bird Realtime and Pusher protocol 7 JSON events (prefix bird, pusher, ...)"

    /// The event prefix in use; nil until given or detected.
    public private(set) var prefix: String? {
        didSet {
            prefixes = Self.prefixes(of: prefix)
            interned?.names.removeAll()  // (their kinds were worked out under the old prefix)
        }
    }
    public var dialect: String? { prefix }
    /// "PREFIX:" and "PREFIX_internal:", made once (not for every event's classification).
    private var prefixes: (protocol: String, internal: String)?
    /// The names and channels decoded so far (never nil in a decoder: optional only as
    /// `envelope`'s cache).
    private var interned: Interned? = Interned()

    /// The strings `decode` keeps from message to message, so that a name or channel seen
    /// before costs a hash of its bytes (`InternedStrings`).
    struct Interned {
        /// Event names, each with its kind under `prefix`: a name is made and classified once.
        var names = InternedStrings<RealtimeEventKind>(limit: 256)
        /// Channels: one over 15 bytes (`private-user-173`) was a heap allocation per message.
        var channels = InternedNames(limit: 2048)
    }

    public init(prefix: String? = nil) {
        self.prefix = prefix
        self.prefixes = Self.prefixes(of: prefix)
    }

    private static func prefixes(of prefix: String?) -> (protocol: String, internal: String)? {
        prefix.map { ($0 + ":", $0 + "_internal:") }
    }

    static let envelopeKeys: [StaticString] = ["event", "channel", "data"]

    /// Decodes a text payload. Learns the prefix from a handshake when none is set yet.
    /// The same event as `adopt(envelope(payload))`, with the name and channel taken from
    /// the decoder's tables when it saw them before.
    public mutating func decode(_ payload: [UInt8]) -> RealtimeEvent? {
        guard let (event, kindKnown) = payload.withUnsafeBufferPointer({ Self.envelope($0, of: payload, cache: &interned) })
        else { return nil }
        if kindKnown { return event }
        // A name not in the table: learn the prefix (which empties the table), classify,
        // and keep the name with its kind.
        let classified = classify(event)
        var name = event.name
        name.withUTF8 { interned?.names.keep($0, text: event.name, value: classified.kind) }
        return classified
    }

    /// Decodes a text payload given as a string.
    public mutating func decode(_ text: String) -> RealtimeEvent? {
        decode(Array(text.utf8))
    }

    /// Decodes an already parsed envelope.
    public mutating func decode(_ envelope: JSONValue) -> RealtimeEvent? {
        guard let event = Self.envelope(tree: envelope) else { return nil }
        return adopt(event)
    }

    /// Classifies an event decoded elsewhere under this decoder's prefix (learning it).
    public mutating func adopt(_ event: RealtimeEvent) -> RealtimeEvent? { classify(event) }

    /// The event with its kind under the prefix, learned from it when none is set yet.
    private mutating func classify(_ event: RealtimeEvent) -> RealtimeEvent {
        if prefix == nil { prefix = Self.detectPrefix(event.name) }
        var event = event
        event.kind = kind(of: event.name)
        return event
    }

    /// The envelope of a payload without classifying it (`kind` is `.other`); nil when it
    /// is no event.
    public static func envelope(_ payload: [UInt8]) -> RealtimeEvent? {
        var noCache: Interned?
        return payload.withUnsafeBufferPointer { envelope($0, of: payload, cache: &noCache) }?.event
    }

    /// The one envelope path, over the payload's bytes (`payload`'s own, for the slices
    /// kept): byte-level, the JSON-tree path only when a key holds an escape. With a
    /// `cache`, the name and channel come from its tables when they hold them, a new
    /// channel is kept, and a name found there brings its kind (`kindKnown`); otherwise
    /// `kind` is `.other`, for the caller to classify.
    @inline(__always)
    private static func envelope(_ bytes: UnsafeBufferPointer<UInt8>, of payload: [UInt8],
                                 cache: inout Interned?) -> (event: RealtimeEvent, kindKnown: Bool)? {
        switch JSONSkimmer.envelope(of: bytes, named: envelopeKeys) {
        case nil:
            return nil
        case .tree(let tree)?:
            return envelope(tree: tree).map { ($0, false) }
        case .members(let members)?:
            guard let nameSpan = members[0], nameSpan.isString else { return nil }
            let name: String
            var kind = RealtimeEventKind.other
            var kindKnown = false
            if !nameSpan.escaped, let known = cache?.names.lookUp(UnsafeBufferPointer(rebasing: bytes[nameSpan.content])) {
                (name, kind, kindKnown) = (known.text, known.value, true)
            } else {
                guard let text = string(nameSpan, in: payload) else { return nil }
                name = text
            }
            let channel = members[1].flatMap { $0.isString ? self.channel($0, in: bytes, of: payload, cache: &cache) : nil }
            return (RealtimeEvent(name: name, channel: channel, dataJSON: members[2].map { payload[$0.range] }, kind: kind),
                    kindKnown)
        }
    }

    /// A string channel's text, from the cache's channels when seen before (and kept there
    /// when new).
    private static func channel(_ span: JSONSkimmer.Span, in bytes: UnsafeBufferPointer<UInt8>, of payload: [UInt8],
                                cache: inout Interned?) -> String? {
        guard !span.escaped, cache != nil else { return string(span, in: payload) }
        let text = UnsafeBufferPointer(rebasing: bytes[span.content])
        if let known = cache?.channels.lookUp(name: text) { return known }
        let channel = String(decoding: text, as: UTF8.self)
        cache?.channels.keep(text, name: channel)
        return channel
    }

    /// The envelope's `channel` when it is a string, whether or not the envelope has an
    /// event (fault filters match on it).
    public static func channel(of payload: [UInt8]) -> String? {
        switch JSONSkimmer.members(of: payload, named: channelKey) {
        case .notAnObject: return nil
        case .needsParser: return (try? JSONParser.parse(payload))?["channel"]?.stringValue
        case .members(let members): return members[0].flatMap { $0.isString ? string($0, in: payload) : nil }
        }
    }

    static let channelKey: [StaticString] = ["channel"]

    /// A string member's text: its bytes when it has no escape, else the parser's decoding.
    private static func string(_ span: JSONSkimmer.Span, in payload: [UInt8]) -> String? {
        if !span.escaped { return String(decoding: payload[span.content], as: UTF8.self) }
        return (try? JSONParser.parse(payload[span.range]))?.stringValue
    }

    /// The envelope of a parsed tree (the path for envelopes with escaped keys).
    static func envelope(tree: JSONValue) -> RealtimeEvent? {
        guard let object = tree.objectValue, let name = object["event"]?.stringValue else { return nil }
        let raw = object["data"]
        return RealtimeEvent(name: name, channel: object["channel"]?.stringValue,
                             data: RealtimeEvent.decodedOnceMore(raw), rawData: raw, kind: .other)
    }

    /// Protocol event names that reveal the prefix: the handshake first of all, but also a
    /// client's early subscribe or ping when the capture starts mid-connection.
    static let revealing: Set<String> = ["connection_established", "ping", "pong", "subscribe", "unsubscribe",
                                         "signin", "signin_success", "subscription_error", "error"]

    /// "bird:connection_established" -> "bird"; "pusher_internal:..." -> "pusher".
    static func detectPrefix(_ name: String) -> String? {
        guard let colon = name.firstIndex(of: ":") else { return nil }
        let rest = String(name[name.index(after: colon)...])
        var head = String(name[..<colon])
        if head.hasSuffix("_internal") {
            head.removeLast("_internal".count)
            return rest == "subscription_succeeded" && !head.isEmpty ? head : nil
        }
        return revealing.contains(rest) && !head.isEmpty ? head : nil
    }

    /// The meaning of an event name under the current prefix.
    public func kind(of name: String) -> RealtimeEventKind {
        if name.hasPrefix("client-") { return .clientEvent }
        guard let (protocolPrefix, internalPrefix) = prefixes else { return .other }
        let rest: Substring
        if name.hasPrefix(internalPrefix) {
            rest = name.dropFirst(internalPrefix.count)
        } else if name.hasPrefix(protocolPrefix) {
            rest = name.dropFirst(protocolPrefix.count)
        } else {
            return .other
        }
        let kind = RealtimeEventKind(rawValue: String(rest)) ?? .other
        return kind == .clientEvent ? .other : kind
    }

    /// An envelope's `data` as an object, decoded once more when it is a string holding
    /// JSON (the Pusher convention); nil when it is no object.
    public static func dataObject(of envelope: JSONObject) -> JSONObject? {
        if case .object(let object)? = RealtimeEvent.decodedOnceMore(envelope["data"]) { return object }
        return nil
    }

    /// Auth re-signed for `socketID` (see `BirdAuth.resign`).
    public func resign(_ payload: [UInt8], socketID: String, secret: String) -> [UInt8] {
        BirdAuth.resign(payload, socketID: socketID, secret: secret)
    }
}
