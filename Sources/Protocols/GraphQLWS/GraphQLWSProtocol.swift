import JSON
import Protocols

/// The graphql-ws entry of the protocol table: the `graphql-transport-ws` subprotocol
/// (the graphql-ws library's PROTOCOL.md), whose every message is a JSON object
/// `{"type": ..., "id": ..., "payload": ...}`.
///
/// The event's name is the `type`, its channel the operation `id`, its data the
/// `payload`. The handshake is `connection_init` (client) answered by `connection_ack`
/// (server): the ack is the connection established. `ping`/`pong` go either way.
/// `subscribe` starts an operation; the server's `next` carries its results, so a `next`
/// is the sign that the operation is active (the protocol has no separate
/// acknowledgement of a subscribe): it maps to subscription succeeded. `error` is the
/// operation's error and `complete` (either side) ends it.
///
/// Decoding is byte-level (`JSONSkimmer`) and stateless: a message's kind follows from
/// its `type` alone, so the relay's and the analyzer's instances always agree.
public struct GraphQLWSProtocol: WireProtocol {
    public static let key = "graphql-ws"
    public static let summary = "graphql-ws (subprotocol graphql-transport-ws) JSON messages: connection_init/ack, ping/pong, subscribe, next, error, complete"
    /// The subprotocol the client offers and the server echoes.
    public static let subprotocol = "graphql-transport-ws"
    public var dialect: String? { nil }

    public init() {}

    static let envelopeKeys: [StaticString] = ["type", "id", "payload"]

    public mutating func decode(_ payload: [UInt8]) -> RealtimeEvent? {
        Self.envelope(payload)
    }

    public mutating func adopt(_ event: RealtimeEvent) -> RealtimeEvent? {
        var event = event
        event.kind = Self.kind(ofType: event.name)
        return event
    }

    /// What each message type means (the PROTOCOL.md message list); any other type is
    /// `.other`.
    public static func kind(ofType type: String) -> RealtimeEventKind {
        switch type {
        case "connection_ack": return .connectionEstablished
        case "ping": return .ping
        case "pong": return .pong
        case "subscribe": return .subscribe
        case "next": return .subscriptionSucceeded
        case "error": return .subscriptionError
        case "complete": return .unsubscribe
        default: return .other
        }
    }

    /// The message of a payload, classified; nil when it is no JSON object with a string
    /// `type`. The JSON-tree path only when a key holds an escape.
    public static func envelope(_ payload: [UInt8]) -> RealtimeEvent? {
        switch JSONSkimmer.envelope(of: payload, named: envelopeKeys) {
        case nil:
            return nil
        case .tree(let tree)?:
            return envelope(tree: tree)
        case .members(let members)?:
            guard let typeSpan = members[0], typeSpan.isString, let type = string(typeSpan, in: payload) else { return nil }
            let id = members[1].flatMap { operationID($0, in: payload) }
            return RealtimeEvent(name: type, channel: id, dataJSON: members[2].map { payload[$0.range] }, kind: kind(ofType: type))
        }
    }

    /// The message of a parsed tree (envelopes with escaped keys).
    static func envelope(tree: JSONValue) -> RealtimeEvent? {
        guard let object = tree.objectValue, let type = object["type"]?.stringValue else { return nil }
        let payload = object["payload"]
        let id: String?
        switch object["id"] {
        case .string(let text)?: id = text
        case .int(let number)?: id = String(number)
        default: id = nil
        }
        return RealtimeEvent(name: type, channel: id, data: payload, rawData: payload, kind: kind(ofType: type))
    }

    /// The operation id: a string as sent (the protocol's form), or a whole number's text
    /// (some servers send numbers); nil for any other value.
    private static func operationID(_ span: JSONSkimmer.Span, in payload: [UInt8]) -> String? {
        if span.isString { return string(span, in: payload) }
        guard case .int(let number)? = try? JSONParser.parse(payload[span.range]) else { return nil }
        return String(number)
    }

    /// A string member's text: its bytes when it has no escape, else the parser's decoding.
    private static func string(_ span: JSONSkimmer.Span, in payload: [UInt8]) -> String? {
        if !span.escaped { return String(decoding: payload[span.content], as: UTF8.self) }
        return (try? JSONParser.parse(payload[span.range]))?.stringValue
    }

    /// The client offered `graphql-transport-ws`, a name no other protocol uses (the older
    /// Apollo protocol is `graphql-ws`, which this entry does not claim).
    public static func claim(upgrade: UpgradeEvidence) -> String? {
        guard upgrade.subprotocols.contains(subprotocol) else { return nil }
        return "the upgrade offers the subprotocol \(subprotocol)"
    }

    /// A client's first message `{"type":"connection_init", ...}`.
    public static func claim(message payload: [UInt8]) -> String? {
        guard let message = envelope(payload), message.name == "connection_init" else { return nil }
        return "a message is the graphql-ws connection_init"
    }
}
