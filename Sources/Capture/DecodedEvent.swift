import Protocols

/// A frame's event as a protocol table entry decoded it, carried on the `FrameRecord`
/// (boxed: a record stays small for the pcap path, which never decodes).
///
/// Records compare and hash by what a capture line keeps, so this annotation is equal to
/// any other: a record the relay made equals the same record read back from its capture.
public enum DecodedEvent: Sendable, Hashable {
    /// Nobody decoded it (records read from a file): readers decode the payload themselves.
    case notDecoded
    /// Decoded by the table entry `protocolKey` ("bird"); `event` nil when the payload
    /// carried none. A reader using another entry decodes the payload itself.
    indirect case decoded(protocolKey: String, event: RealtimeEvent?)

    /// The event, when decoded by the entry `key`; nil when not decoded or decoded by another.
    public func event(decodedBy key: String) -> RealtimeEvent?? {
        guard case .decoded(let protocolKey, let event) = self, protocolKey == key else { return nil }
        return .some(event)
    }

    /// The event, whoever decoded it; nil when none was decoded.
    public var event: RealtimeEvent? {
        if case .decoded(_, let event) = self { return event }
        return nil
    }

    public var isDecoded: Bool {
        if case .decoded = self { return true }
        return false
    }

    public static func == (_: DecodedEvent, _: DecodedEvent) -> Bool { true }
    public func hash(into hasher: inout Hasher) {}
}
