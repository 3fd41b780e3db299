// Remaining stubs of the WebSocket module's public API (permessage-deflate), being
// implemented; the signatures are the contract other modules build against.

/// What a server's `Sec-WebSocket-Extensions: permessage-deflate; ...` response agreed.
public struct DeflateParameters: Sendable, Hashable {
    public var clientNoContextTakeover = false
    public var serverNoContextTakeover = false
    public var clientMaxWindowBits = 15
    public var serverMaxWindowBits = 15
    public init() {}
    /// The agreed parameters from a response's extension header, nil if not negotiated.
    public static func negotiated(in headers: [HeaderField]) -> DeflateParameters? { fatalError("codec") }
}

/// Inflates the messages of one direction, keeping the LZ77 window between messages unless
/// no-context-takeover was agreed. A class because it owns a z_stream at a fixed address.
public final class MessageInflater {
    public init(windowBits: Int, noContextTakeover: Bool) { fatalError("codec") }
    /// One whole message's payload (all its frames' payloads joined), without the 00 00 ff ff tail.
    public func inflate(_ message: [UInt8], maxOutput: Int = FrameDecoder.defaultMaxPayload) throws -> [UInt8] { fatalError("codec") }
}

public final class MessageDeflater {
    public init(windowBits: Int, noContextTakeover: Bool) { fatalError("codec") }
    public func deflate(_ message: [UInt8]) -> [UInt8] { fatalError("codec") }
}
