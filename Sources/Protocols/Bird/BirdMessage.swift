import JSON
import WebSocket

/// One Bird/Pusher event as it travels in a text frame: `{"event":..,"channel":..,"data":..}`.
/// `data` is kept as sent: the protocol double-encodes some of it (a JSON string holding an
/// object); `decodedData` undoes that.
public struct BirdMessage: Sendable, Hashable {
    public var event: String
    public var channel: String?
    public var data: JSONValue
    /// `user_id`, which the server adds to client events relayed on presence channels.
    public var userID: String?

    public init(event: String, channel: String? = nil, data: JSONValue = .object(JSONObject()), userID: String? = nil) {
        self.event = event
        self.channel = channel
        self.data = data
        self.userID = userID
    }

    /// The event in a text frame, or nil when the text is not a JSON object with a string `event`.
    public static func parse(_ text: String) -> BirdMessage? {
        guard let value = try? JSONParser.parse(text), let object = value.objectValue,
              let event = object["event"]?.stringValue else { return nil }
        return BirdMessage(event: event, channel: object["channel"]?.stringValue,
                          data: object["data"] ?? .null, userID: object["user_id"]?.stringValue)
    }

    /// The event of a text frame; nil for any other frame or text that is not an event.
    public static func parse(_ frame: Frame) -> BirdMessage? {
        guard frame.opcode == .text else { return nil }
        return parse(String(decoding: frame.payload, as: UTF8.self))
    }

    /// `data` decoded once more when it is a string holding JSON (the Pusher convention).
    public var decodedData: JSONValue {
        if case .string(let text) = data, let inner = try? JSONParser.parse(text) { return inner }
        return data
    }

    public var text: String {
        var object = JSONObject()
        object["event"] = .string(event)
        if let channel { object["channel"] = .string(channel) }
        if let userID { object["user_id"] = .string(userID) }
        object["data"] = data
        return JSONWriter.serialize(.object(object))
    }

    /// An unmasked text frame; a client's runner masks it on the way out.
    public var frame: Frame { .text(text) }

    /// `data` as a JSON string holding `object` (double encoding).
    public static func encoded(_ object: JSONValue) -> JSONValue { .string(JSONWriter.serialize(object)) }
}

/// Which of the three kinds a channel is, from its name.
public enum BirdChannelKind: Sendable, Hashable {
    case `public`, `private`, presence

    public init(channel: String) {
        if channel.hasPrefix("presence-") { self = .presence }
        else if channel.hasPrefix("private-") { self = .private }
        else { self = .public }
    }

    /// Private and presence channels need a signature and are the only ones that carry client events.
    public var needsAuth: Bool { self != .public }
}
