/// Re-signs auth in messages a replay sends as the client, for the live socket id, through
/// the protocol's table entry. Needs the app secret (`--app-secret`), exactly like the
/// app's auth endpoint; without a signer the recorded signature goes out unchanged.
public struct AuthSigner: Sendable {
    public var secret: String
    public var wire: any WireProtocol

    public init(secret: String, wire: any WireProtocol) {
        self.secret = secret
        self.wire = wire
    }

    /// `payload` with its auth re-signed for `socketID`, or unchanged.
    public func resign(_ payload: [UInt8], socketID: String) -> [UInt8] {
        wire.resign(payload, socketID: socketID, secret: secret)
    }
}
