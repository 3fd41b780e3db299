import JSON
import Protocols

/// One Phoenix Channels message as it travels in a text frame, in either serializer:
/// V2 (`vsn=2.0.0`, phoenix.js's default) sends the array `[join_ref, ref, topic, event,
/// payload]`, V1 (`vsn=1.0.0`) the object `{"topic", "event", "payload", "ref", "join_ref"}`.
/// `payload` stays the JSON text it was sent as (a slice of the frame, no copy).
public struct PhoenixMessage: Sendable, Hashable {
    public enum Serializer: String, Sendable, Hashable {
        case v1 = "1.0.0"
        case v2 = "2.0.0"
    }

    public var joinRef: String?
    public var ref: String?
    public var topic: String
    public var event: String
    /// The payload's JSON text; nil when a V1 object has no `payload` member.
    public var payload: ArraySlice<UInt8>?
    public var serializer: Serializer

    public init(joinRef: String?, ref: String?, topic: String, event: String, payload: ArraySlice<UInt8>?,
                serializer: Serializer) {
        self.joinRef = joinRef
        self.ref = ref
        self.topic = topic
        self.event = event
        self.payload = payload
        self.serializer = serializer
    }

    /// The message a text payload holds; nil when it is neither serializer's shape (the
    /// topic and event must be strings, the refs strings, numbers or null). Byte-level:
    /// one skim for V2, two for V1 (five members), a tree only for escaped V1 keys.
    public static func parse(_ bytes: [UInt8]) -> PhoenixMessage? {
        guard let first = bytes.first(where: { !isWhitespace($0) }) else { return nil }
        if first == UInt8(ascii: "[") { return parseArray(bytes) }
        if first == UInt8(ascii: "{") { return parseObject(bytes) }
        return nil
    }

    private static func parseArray(_ bytes: [UInt8]) -> PhoenixMessage? {
        guard let spans = JSONSkimmer.elements(of: bytes, limit: 6), spans.count == 5,
              let topic = string(spans[2], in: bytes), let event = string(spans[3], in: bytes),
              case .some(let joinRef) = reference(spans[0], in: bytes),
              case .some(let ref) = reference(spans[1], in: bytes) else { return nil }
        return PhoenixMessage(joinRef: joinRef, ref: ref, topic: topic, event: event,
                              payload: bytes[spans[4].range], serializer: .v2)
    }

    static let envelopeKeys: [StaticString] = ["topic", "event", "payload"]
    static let refKeys: [StaticString] = ["ref", "join_ref"]

    private static func parseObject(_ bytes: [UInt8]) -> PhoenixMessage? {
        let envelope: JSONSkimmer.Members
        switch JSONSkimmer.members(of: bytes, named: envelopeKeys) {
        case .notAnObject: return nil
        case .needsParser: return (try? JSONParser.parse(bytes)).flatMap { parse(tree: $0) }
        case .members(let members): envelope = members
        }
        guard let topicSpan = envelope[0], let topic = string(topicSpan, in: bytes),
              let eventSpan = envelope[1], let event = string(eventSpan, in: bytes),
              case .members(let refs) = JSONSkimmer.members(of: bytes, named: refKeys),
              case .some(let ref) = refs[0].map({ reference($0, in: bytes) }) ?? .some(nil),
              case .some(let joinRef) = refs[1].map({ reference($0, in: bytes) }) ?? .some(nil) else { return nil }
        return PhoenixMessage(joinRef: joinRef, ref: ref, topic: topic, event: event,
                              payload: envelope[2].map { bytes[$0.range] }, serializer: .v1)
    }

    /// The V1 path for an object whose keys hold escapes: the tree decides, and the
    /// payload is its own canonical text.
    private static func parse(tree: JSONValue) -> PhoenixMessage? {
        guard let object = tree.objectValue, let topic = object["topic"]?.stringValue,
              let event = object["event"]?.stringValue,
              case .some(let ref) = treeReference(object["ref"]),
              case .some(let joinRef) = treeReference(object["join_ref"]) else { return nil }
        let payload = object["payload"].map { ArraySlice(Array(JSONWriter.serialize($0).utf8)) }
        return PhoenixMessage(joinRef: joinRef, ref: ref, topic: topic, event: event, payload: payload, serializer: .v1)
    }

    /// A ref: `.some(text)` for a string or number, `.some(nil)` for null or absent, nil
    /// (no Phoenix message) for anything else.
    private static func reference(_ span: JSONSkimmer.Span, in bytes: [UInt8]) -> String?? {
        if span.isString { return string(span, in: bytes).map { .some($0) } }
        let text = bytes[span.range]
        if text.elementsEqual("null".utf8) { return .some(nil) }
        guard let first = text.first, first == UInt8(ascii: "-") || (UInt8(ascii: "0")...UInt8(ascii: "9")).contains(first) else {
            return nil
        }
        return .some(String(decoding: text, as: UTF8.self))
    }

    private static func treeReference(_ value: JSONValue?) -> String?? {
        switch value {
        case nil, .null?: return .some(nil)
        case .string(let text)?: return .some(text)
        case .int(let number)?: return .some(String(number))
        case .double?: return value.map { .some(JSONWriter.serialize($0)) }
        default: return nil
        }
    }

    /// A string element's text: its bytes when it has no escape, else the parser's decoding.
    static func string(_ span: JSONSkimmer.Span, in bytes: [UInt8]) -> String? {
        guard span.isString else { return nil }
        if !span.escaped { return String(decoding: bytes[span.content], as: UTF8.self) }
        return (try? JSONParser.parse(bytes[span.range]))?.stringValue
    }

    /// `payload.status` of a `phx_reply` (`"ok"`, `"error"`); nil when absent.
    public var replyStatus: String? {
        guard let payload else { return nil }
        let bytes = Array(payload)
        guard case .members(let members) = JSONSkimmer.members(of: bytes, named: Self.statusKey),
              let span = members[0] else { return nil }
        return Self.string(span, in: bytes)
    }

    static let statusKey: [StaticString] = ["status"]

    /// The message in its serializer's shape, for the simulator's server.
    public func encoded() -> [UInt8] {
        let payloadText = payload.map { String(decoding: $0, as: UTF8.self) } ?? "{}"
        switch serializer {
        case .v2:
            return Array("[\(Self.json(joinRef)),\(Self.json(ref)),\(Self.json(topic)),\(Self.json(event)),\(payloadText)]".utf8)
        case .v1:
            return Array("{\"topic\":\(Self.json(topic)),\"event\":\(Self.json(event)),\"payload\":\(payloadText),\"ref\":\(Self.json(ref)),\"join_ref\":\(Self.json(joinRef))}".utf8)
        }
    }

    private static func json(_ text: String?) -> String {
        text.map { JSONWriter.serialize(.string($0)) } ?? "null"
    }
}

private func isWhitespace(_ byte: UInt8) -> Bool {
    byte == 0x20 || byte == 0x09 || byte == 0x0A || byte == 0x0D
}
