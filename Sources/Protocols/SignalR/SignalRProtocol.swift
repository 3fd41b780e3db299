import JSON
import Protocols

/// The ASP.NET Core SignalR entry of the protocol table: the JSON hub protocol, whose
/// messages are JSON records each ended by the record separator `0x1E`.
///
/// A connection starts with the client's handshake request `{"protocol":"json","version":1}`
/// and the server's answer `{}` (established) or `{"error":...}`; then every record carries
/// a `type`: 1 invocation (`target` names the hub method or client event), 2 stream item,
/// 3 completion, 4 stream invocation, 5 cancel invocation, 6 ping (either side, keep-alive),
/// 7 close (`error`, `allowReconnect`).
///
/// A text message may hold several records (a server's handshake answer often shares its
/// message with the first invocation). The interface gives one event per message, so the
/// event is the message's first record's: a handshake answer stays a handshake whatever
/// follows it. Decoding is byte-level (`JSONSkimmer`); `data` is the first record itself,
/// so `dataMember("error")` reads a close's or completion's error.
public struct SignalRProtocol: WireProtocol {
    public static let key = "signalr"
    public static let summary = "ASP.NET Core SignalR JSON hub protocol (0x1E-separated records: handshake, invocations, ping, close)"
    public var dialect: String? { nil }

    public init() {}

    /// The record separator that ends every record of the JSON hub protocol.
    public static let recordSeparator: UInt8 = 0x1E

    public mutating func decode(_ payload: [UInt8]) -> RealtimeEvent? {
        guard let record = Self.firstRecord(payload) else { return nil }
        return Self.event(of: record)
    }

    /// Kinds depend on nothing learned, so another instance's event is taken as it is.
    public mutating func adopt(_ event: RealtimeEvent) -> RealtimeEvent? { event }

    /// The client's handshake request as one of the first messages: a record naming a
    /// hub `protocol` and its `version`, with no `type`. No other protocol in the table
    /// ends its messages with 0x1E.
    public static func claim(message payload: [UInt8]) -> String? {
        guard let record = firstRecord(payload), let request = handshakeRequest(record) else { return nil }
        let name = request.protocol.count > 32 ? String(request.protocol.prefix(32)) + "..." : request.protocol
        return "a message is the SignalR handshake request (protocol \(name), version \(request.version))"
    }

    /// The hub protocol and version a message's first record asks for when it is a
    /// handshake request; nil otherwise (the simulator's hub answers it).
    public static func handshakeRequest(in payload: [UInt8]) -> (protocol: String, version: Int64)? {
        firstRecord(payload).flatMap(handshakeRequest)
    }

    /// The bytes of the message's first record: up to its first 0x1E, without leading
    /// JSON whitespace; nil when the message holds no separator (no SignalR record).
    static func firstRecord(_ payload: [UInt8]) -> ArraySlice<UInt8>? {
        guard let end = payload.firstIndex(of: recordSeparator) else { return nil }
        let record = payload[..<end]
        guard let start = record.firstIndex(where: { !isJSONSpace($0) }) else { return nil }
        return record[start...]
    }

    static let typedKeys: [StaticString] = ["type", "target", "invocationId"]
    static let handshakeKeys: [StaticString] = ["protocol", "version", "error"]

    /// The event of one record; nil when the record is no JSON object.
    static func event(of record: ArraySlice<UInt8>) -> RealtimeEvent? {
        guard record.first == UInt8(ascii: "{") else { return nil }
        let members: JSONSkimmer.Members
        switch JSONSkimmer.members(of: record, named: typedKeys) {
        case .notAnObject: return nil
        case .needsParser: return eventOfEscapedRecord(record)
        case .members(let found): members = found
        }
        guard let typeSpan = members[0] else { return handshakeEvent(record) }
        let type = (try? JSONParser.parse(record[shifted(typeSpan.range, in: record)]))?.intValue
        let target = members[1].flatMap { string($0, in: record) }
        let invocationID = members[2].flatMap { string($0, in: record) }
        return typedEvent(type: type, target: target, invocationID: invocationID, record: record)
    }

    /// The event of a typed record, from its decoded members.
    static func typedEvent(type: Int64?, target: String?, invocationID: String?, record: ArraySlice<UInt8>) -> RealtimeEvent {
        let (name, kind): (String, RealtimeEventKind)
        switch type {
        case 1: (name, kind) = (target ?? "invocation", .other)
        case 2: (name, kind) = ("stream_item", .other)
        case 3: (name, kind) = ("completion", hasMember("error", record) ? .error : .other)
        case 4: (name, kind) = (target ?? "stream_invocation", .subscribe)
        case 5: (name, kind) = ("cancel_invocation", .unsubscribe)
        case 6: (name, kind) = ("ping", .ping)
        case 7: (name, kind) = ("close", hasMember("error", record) ? .error : .other)
        case let other?: (name, kind) = ("type \(other)", .other)
        case nil: (name, kind) = ("type ?", .other)
        }
        // A stream's invocation id is what its cancel names: the "channel" of the stream.
        let channel = (type == 4 || type == 5) ? invocationID : nil
        var event = RealtimeEvent(name: name, channel: channel, dataJSON: record, kind: kind)
        event.ref = invocationID
        if type == 7 { event.ending = closeEnding(record) }
        return event
    }

    /// What a close message (type 7) says of the session: the hub protocol lets the client
    /// reconnect only when `allowReconnect` is `true`; absent or anything else is final.
    static func closeEnding(_ record: ArraySlice<UInt8>) -> SessionEnding {
        let asData = RealtimeEvent(name: "", channel: nil, dataJSON: record, kind: .other)
        return asData.dataMember("allowReconnect") == .bool(true) ? .reconnectInvited : .final
    }

    /// A record without `type`: the server's handshake answer (`{}`, or `{"error":...}`
    /// for a refused one) or the client's request (which names its `protocol`).
    static func handshakeEvent(_ record: ArraySlice<UInt8>) -> RealtimeEvent {
        if handshakeRequest(record) != nil {
            return RealtimeEvent(name: "handshake_request", channel: nil, dataJSON: record, kind: .other)
        }
        if hasMember("error", record) {
            return RealtimeEvent(name: "handshake_error", channel: nil, dataJSON: record, kind: .error)
        }
        return RealtimeEvent(name: "handshake", channel: nil, dataJSON: record, kind: .connectionEstablished)
    }

    /// The hub protocol and version a handshake request names; nil for any other record.
    static func handshakeRequest(_ record: ArraySlice<UInt8>) -> (protocol: String, version: Int64)? {
        guard record.first == UInt8(ascii: "{"),
              case .members(let members) = JSONSkimmer.members(of: record, named: handshakeKeys),
              let protocolSpan = members[0], protocolSpan.isString, let name = string(protocolSpan, in: record),
              let versionSpan = members[1],
              let version = (try? JSONParser.parse(record[shifted(versionSpan.range, in: record)]))?.intValue,
              case .members(let typed) = JSONSkimmer.members(of: record, named: typedKeys), typed[0] == nil
        else { return nil }
        return (name, version)
    }

    /// A record whose keys hold escapes: decoded from its tree (rare; exact).
    static func eventOfEscapedRecord(_ record: ArraySlice<UInt8>) -> RealtimeEvent? {
        guard let tree = try? JSONParser.parse(record), let object = tree.objectValue else { return nil }
        guard let type = object["type"] else {
            if object["protocol"]?.stringValue != nil, object["version"]?.intValue != nil {
                return RealtimeEvent(name: "handshake_request", channel: nil, dataJSON: record, kind: .other)
            }
            let kind: RealtimeEventKind = object["error"] != nil ? .error : .connectionEstablished
            return RealtimeEvent(name: kind == .error ? "handshake_error" : "handshake", channel: nil, dataJSON: record, kind: kind)
        }
        return typedEvent(type: type.intValue, target: object["target"]?.stringValue,
                          invocationID: object["invocationId"]?.stringValue, record: record)
    }

    /// Whether the record has a non-null member `key` (only "error" is asked).
    static func hasMember(_ key: StaticString, _ record: ArraySlice<UInt8>) -> Bool {
        let asData = RealtimeEvent(name: "", channel: nil, dataJSON: record, kind: .other)
        guard let value = asData.dataMember(key) else { return false }
        return value != .null
    }

    /// A skimmer span (offsets from the slice's start) as indices of `record`.
    static func shifted(_ range: Range<Int>, in record: ArraySlice<UInt8>) -> Range<Int> {
        record.startIndex + range.lowerBound ..< record.startIndex + range.upperBound
    }

    /// A string member's text: its bytes when it has no escape, else the parser's decoding.
    static func string(_ span: JSONSkimmer.Span, in record: ArraySlice<UInt8>) -> String? {
        guard span.isString else { return nil }
        if !span.escaped { return String(decoding: record[shifted(span.content, in: record)], as: UTF8.self) }
        return (try? JSONParser.parse(record[shifted(span.range, in: record)]))?.stringValue
    }

    static func isJSONSpace(_ byte: UInt8) -> Bool {
        byte == 0x20 || byte == 0x09 || byte == 0x0A || byte == 0x0D
    }
}
