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
