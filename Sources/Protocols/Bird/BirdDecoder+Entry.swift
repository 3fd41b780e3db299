import Protocols

/// What the Bird/Pusher entry does for the engines besides decoding: claim a connection for
/// detection, rewrite its handshake for the handshake faults, check its auth signatures.
extension BirdDecoder {
    /// The Pusher protocol's URL: `/app/APP_KEY?protocol=N...`.
    public static func claim(upgrade: UpgradeEvidence) -> String? {
        let path = upgrade.path
        guard path.hasPrefix("/app/"), path.count > "/app/".count,
              upgrade.query.contains(where: { $0.name == "protocol" }) else { return nil }
        return "the upgrade's path /app/KEY?protocol= is the Pusher protocol's URL"
    }

    /// An event envelope whose name shows a Pusher-protocol prefix
    /// (`PREFIX:connection_established`, `PREFIX:ping`, `PREFIX_internal:subscription_succeeded`).
    public static func claim(message payload: [UInt8]) -> String? {
        guard let event = envelope(payload), detectPrefix(event.name) != nil else { return nil }
        let name = event.name.count > 64 ? String(event.name.prefix(64)) + "..." : event.name
        return "a message is the Pusher-protocol event \(name)"
    }

    /// `auth` signs the socket id and `channel_data` goes with it; `socket_id` is the
    /// server's new id on every connection.
    public static var volatileFields: VolatileFields {
        VolatileFields(ignored: ["auth", "channel_data"], mapped: ["socket_id"])
    }

    public func rewriteHandshake(_ payload: [UInt8], event: RealtimeEvent, _ change: HandshakeChange) -> HandshakeRewrite? {
        guard event.kind == .connectionEstablished else { return nil }
        return BirdHandshake.rewrite(payload, change)
    }

    /// A private or presence subscribe's channel signature, a sign-in's user signature.
    public func checkAuth(of event: RealtimeEvent, socketID: String, secret: String) -> AuthCheck? {
        guard let auth = event.auth else { return nil }
        let expected: String
        let what: String
        switch event.kind {
        case .subscribe:
            guard let channel = event.targetChannel else { return nil }
            let presence = channel.hasPrefix("presence-")
            guard presence || channel.hasPrefix("private-") else { return nil }
            expected = BirdAuth.channelSignature(secret: secret, socketID: socketID, channel: channel,
                                                 channelData: presence ? (event.channelData ?? "") : nil)
            what = "subscribe \(channel)"
        case .signin:
            expected = BirdAuth.signinSignature(secret: secret, socketID: socketID, userData: event.userData ?? "")
            what = "signin"
        default:
            return nil
        }
        return AuthCheck(what: what, auth: auth, valid: BirdAuth.signature(ofAuth: auth) == expected)
    }
}
