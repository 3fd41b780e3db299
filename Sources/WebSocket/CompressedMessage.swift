/// The compressed payloads of one permessage-deflate message (RFC 7692), gathered frame by
/// frame until its last frame so it can be inflated whole; shared by the proxy's relay and
/// the pcap reader, so both bound it the same way.
///
/// Endless continuation frames cannot grow it past `maxBytes` (the proxy's and the reader's
/// `maxPayload`): the message is then dropped from reassembly (`.tooLarge`, once) and its
/// remaining frames are reported `.notCompressed`, to be recorded as sent.
public struct CompressedMessage: Sendable {
    public let maxBytes: Int
    /// The message being received is compressed (RSV1 on its first frame) and still gathered.
    public private(set) var isCompressed = false
    private var parts: [UInt8] = []

    public init(maxBytes: Int) {
        self.maxBytes = maxBytes
    }

    public enum Step: Sendable, Equatable {
        /// Not part of a compressed message (or of one given up as too large): record as sent.
        case notCompressed
        /// Gathered; the message is recorded inflated on its last frame.
        case partial
        /// The last frame: the whole compressed message, to inflate.
        case complete([UInt8])
        /// The message passed `maxBytes` with this frame and is no longer gathered.
        case tooLarge
    }

    /// Takes a data or continuation frame's payload (control frames are not part of messages).
    public mutating func add(opcode: Opcode, rsv1: Bool, fin: Bool, payload: [UInt8]) -> Step {
        if opcode != .continuation {
            isCompressed = rsv1
            parts = []
        }
        guard isCompressed else { return .notCompressed }
        guard payload.count <= maxBytes - parts.count else {
            isCompressed = false
            parts = []
            return .tooLarge
        }
        parts.append(contentsOf: payload)
        guard fin else { return .partial }
        isCompressed = false
        defer { parts = [] }
        return .complete(parts)
    }
}
