// PUBLIC API CONTRACT of the WebSocket module (stubs). The codec work replaces every
// `fatalError` with the implementation, may split this file into one file per type, and
// may add to the API, but must keep these signatures so other modules build against them.

/// An RFC 6455 violation, named, with the close code a peer should answer it with.
public struct WebSocketError: Error, Sendable, Hashable, CustomStringConvertible {
    public enum Kind: String, Sendable, Hashable {
        case reservedOpcode, reservedBitsSet, fragmentedControlFrame, controlFrameTooLong
        case unexpectedContinuation, expectedContinuation, invalidClosePayload, invalidCloseCode
        case invalidUTF8, payloadTooLarge, maskRequired, maskNotAllowed, nonMinimalLength, lengthOverflow
    }
    public var kind: Kind
    /// For a person: "control frame of 126 bytes (limit 125)".
    public var message: String
    /// 1002 protocol error, 1007 invalid payload, 1009 too big.
    public var closeCode: CloseCode
    public init(_ kind: Kind, _ message: String, closeCode: CloseCode) {
        self.kind = kind
        self.message = message
        self.closeCode = closeCode
    }
    public var description: String { "\(message) (close \(closeCode.rawValue))" }
}

/// Incremental frame parser: bytes in any split, frames out. Structural only (a frame it
/// returns may still break message rules; `MessageValidator` judges that), so a transparent
/// relay can carry what a strict peer would reject. Throws only for what cannot be parsed
/// or buffered at all (payload over `maxPayload`, 64-bit length with the top bit set).
public struct FrameDecoder: Sendable {
    public static let defaultMaxPayload = 64 << 20
    public init(maxPayload: Int = FrameDecoder.defaultMaxPayload) { fatalError("codec") }
    /// Hands the decoder more bytes; they are consumed by `next()`.
    public mutating func append<C: Collection>(_ bytes: C) where C.Element == UInt8 { fatalError("codec") }
    /// The next complete frame, or nil when more bytes are needed.
    public mutating func next() throws(WebSocketError) -> Frame? { fatalError("codec") }
    /// Bytes received but not yet part of a returned frame.
    public var bufferedByteCount: Int { fatalError("codec") }
}

public enum FrameEncoder {
    /// Wire bytes of `frame`: minimal length encoding, masked with `frame.maskingKey` if set.
    public static func encode(_ frame: Frame) -> [UInt8] { fatalError("codec") }
    public static func encode(_ frame: Frame, into out: inout [UInt8]) { fatalError("codec") }
}

/// Masks or unmasks in place (the operation is its own inverse). `offset` is the position of
/// `bytes[0]` within the payload, for masking in pieces.
public func applyMask(_ key: MaskingKey, to bytes: inout [UInt8], offset: Int = 0) { fatalError("codec") }

/// A close frame's body: optional code and UTF-8 reason (RFC 6455 5.5.1, 7.4).
public struct ClosePayload: Sendable, Hashable {
    public var code: UInt16?
    public var reason: String
    public init(code: UInt16?, reason: String) { self.code = code; self.reason = reason }
    /// Strict parse: a 1-byte body, a code that may not be sent, or a non-UTF-8 reason throw.
    public static func parse(_ payload: [UInt8]) throws(WebSocketError) -> ClosePayload { fatalError("codec") }
    public var encoded: [UInt8] { fatalError("codec") }
}

/// Judges frames against RFC 6455's message rules, one direction of one connection:
/// fragmentation and continuation order, control frames (<= 125 bytes, FIN set), RSV bits
/// without a negotiated extension, masking direction, close payloads, and UTF-8 of text
/// messages incrementally across fragments.
public struct MessageValidator: Sendable {
    /// `rsv1Allowed`: permessage-deflate was negotiated. `expectMasked`: frames from a client.
    public init(rsv1Allowed: Bool = false, expectMasked: Bool? = nil) { fatalError("codec") }
    /// The first rule `frame` breaks, or nil. Updates the message state either way.
    public mutating func validate(_ frame: Frame) -> WebSocketError? { fatalError("codec") }
}

/// Incremental UTF-8 validation: bytes may split a character anywhere.
public struct UTF8Validator: Sendable {
    public init() { fatalError("codec") }
    /// False as soon as the bytes so far cannot be the start of valid UTF-8.
    public mutating func feed<C: Collection>(_ bytes: C) -> Bool where C.Element == UInt8 { fatalError("codec") }
    /// True when no character is left unfinished.
    public var isComplete: Bool { fatalError("codec") }
}

// MARK: - HTTP/1.1 upgrade

public struct HTTPRequestHead: Sendable, Hashable {
    public var method: String
    public var target: String
    public var version: String
    public var headers: [HeaderField]
    public init(method: String, target: String, version: String = "HTTP/1.1", headers: [HeaderField]) {
        self.method = method; self.target = target; self.version = version; self.headers = headers
    }
    /// GET with `Upgrade: websocket`, `Connection: upgrade`, a key and version 13.
    public var isWebSocketUpgrade: Bool { fatalError("codec") }
    public var serialized: [UInt8] { fatalError("codec") }
}

public struct HTTPResponseHead: Sendable, Hashable {
    public var version: String
    public var status: Int
    public var reason: String
    public var headers: [HeaderField]
    public init(version: String = "HTTP/1.1", status: Int, reason: String, headers: [HeaderField]) {
        self.version = version; self.status = status; self.reason = reason; self.headers = headers
    }
    public var serialized: [UInt8] { fatalError("codec") }
}

public struct HTTPParseError: Error, Sendable, Hashable, CustomStringConvertible {
    public var message: String
    /// The HTTP status a server should answer with (400, 431).
    public var status: Int
    public init(_ message: String, status: Int = 400) { self.message = message; self.status = status }
    public var description: String { message }
}

/// Parses one HTTP/1.1 head (request or response) incrementally, on bytes; bytes after the
/// blank line stay in `remainder` (the first WebSocket frames may arrive in the same read).
public struct HTTPHeadParser: Sendable {
    public static let defaultMaxHeadBytes = 16 * 1024
    public init(maxHeadBytes: Int = HTTPHeadParser.defaultMaxHeadBytes) { fatalError("codec") }
    public mutating func append<C: Collection>(_ bytes: C) where C.Element == UInt8 { fatalError("codec") }
    /// The request once its head is complete, nil while more bytes are needed.
    public mutating func parseRequest() throws(HTTPParseError) -> HTTPRequestHead? { fatalError("codec") }
    public mutating func parseResponse() throws(HTTPParseError) -> HTTPResponseHead? { fatalError("codec") }
    /// Bytes after the head, once parsed.
    public var remainder: [UInt8] { fatalError("codec") }
}

public enum WebSocketHandshake {
    public static let guid = "258EAFA5-E914-47DA-95CA-C5AB0DC85B11"
    /// base64(SHA-1(key + GUID)), via OpenSSL.
    public static func acceptKey(for key: String) -> String { fatalError("codec") }
    /// A fresh random Sec-WebSocket-Key (16 random bytes, base64).
    public static func makeKey<G: RandomNumberGenerator>(using generator: inout G) -> String { fatalError("codec") }
    /// A client's upgrade request for `target` on `host`, with any extra headers.
    public static func request(host: String, target: String, key: String, extraHeaders: [HeaderField] = []) -> HTTPRequestHead { fatalError("codec") }
    /// The 101 response accepting `request` (echoes no extension unless given).
    public static func response(accepting request: HTTPRequestHead, extraHeaders: [HeaderField] = []) -> HTTPResponseHead { fatalError("codec") }
}

// MARK: - permessage-deflate (RFC 7692)

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
