import JSON

/// Decodes Bird/Pusher events from text payloads. Frames that are not events (not JSON,
/// not an object, no string `event`) give nil and stay plain frames for the caller.
///
/// The prefix (`bird`, `pusher`, ...) is either given, or learned from the first protocol
/// event seen (normally `PREFIX:connection_established`, the first event of a connection).
public struct RealtimeDecoder: Sendable {
    /// The event prefix in use; nil until given or detected.
    public private(set) var prefix: String?

    public init(prefix: String? = nil) {
        self.prefix = prefix
    }

    /// Decodes a text payload. Learns the prefix from a handshake when none is set yet.
    public mutating func decode(_ payload: [UInt8]) -> RealtimeEvent? {
        guard let first = payload.first(where: { !isWhitespace($0) }), first == UInt8(ascii: "{"),
              let value = try? JSONParser.parse(payload) else { return nil }
        return decode(value)
    }

    /// Decodes a text payload given as a string.
    public mutating func decode(_ text: String) -> RealtimeEvent? {
        decode(Array(text.utf8))
    }

    /// Decodes an already parsed envelope.
    public mutating func decode(_ envelope: JSONValue) -> RealtimeEvent? {
        guard let object = envelope.objectValue, let name = object["event"]?.stringValue else { return nil }
        if prefix == nil { prefix = Self.detectPrefix(name) }
        let raw = object["data"]
        let channel = object["channel"]?.stringValue
        if case .string(let text)? = raw, Self.mayHoldJSON(text) {
            return RealtimeEvent(name: name, channel: channel, dataText: text, rawData: raw, kind: kind(of: name))
        }
        return RealtimeEvent(name: name, channel: channel, data: Self.decodeData(raw), rawData: raw, kind: kind(of: name))
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
        guard let prefix else { return .other }
        let protocolPrefix = prefix + ":"
        let internalPrefix = prefix + "_internal:"
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

    /// Pusher sends `data` as a JSON string holding an object; decode it once more then.
    /// An envelope's `data` as an object, decoded once more when it is a string holding JSON
    /// (the Pusher convention); nil when it is no object.
    public static func dataObject(of envelope: JSONObject) -> JSONObject? {
        if case .object(let object)? = decodeData(envelope["data"]) { return object }
        return nil
    }

    static func decodeData(_ raw: JSONValue?) -> JSONValue? {
        guard case .string(let text)? = raw, mayHoldJSON(text), let inner = try? JSONParser.parse(text) else { return raw }
        return inner
    }

    /// A string whose first non-blank character opens an object or array.
    static func mayHoldJSON(_ text: String) -> Bool {
        guard let first = text.utf8.first(where: { !isWhitespace($0) }) else { return false }
        return first == UInt8(ascii: "{") || first == UInt8(ascii: "[")
    }
}

private func isWhitespace(_ byte: UInt8) -> Bool {
    byte == 0x20 || byte == 0x09 || byte == 0x0A || byte == 0x0D
}
