/// A compressed message that zlib could not inflate (RFC 7692): corrupt data, or a stream
/// that ended where a message should have continued. A peer answers with 1007.
public struct DeflateError: Error, Sendable, Hashable, CustomStringConvertible {
    public var message: String
    public var closeCode: CloseCode
    public init(_ message: String, closeCode: CloseCode = .invalidPayload) {
        self.message = message
        self.closeCode = closeCode
    }
    public var description: String { "\(message) (close \(closeCode.rawValue))" }
}
