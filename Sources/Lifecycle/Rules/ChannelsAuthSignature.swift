import Bird
import Capture

/// `channels.auth-signature` (only with `--app-secret`): a subscribe's or sign-in's `auth`
/// is not the HMAC-SHA256 over this connection's socket id.
public struct ChannelsAuthSignature: LifecycleRule {
    public static let id = "channels.auth-signature"
    public static let severity = Severity.error
    public static let summary = "auth and sign-in signatures are the HMAC for this connection's socket id (--app-secret)"
    public static let observes: StepKinds = .clientFrame
    public init(spec: LifecycleSpec) {}
    public static func notChecked(appSecret: String?) -> String? {
        appSecret == nil ? "needs --app-secret to verify signatures" : nil
    }

    public mutating func observe(_ step: TimelineStep, _ context: RuleContext) -> [Finding] {
        guard let secret = context.appSecret, case .frame(let frame, let event?) = step, frame.from == .client,
              let auth = event.auth, let socketID = context.connections[frame.conn]?.socketID else { return [] }
        let expected: String
        let what: String
        switch event.kind {
        case .subscribe:
            guard let channel = event.targetChannel else { return [] }
            let presence = channel.hasPrefix("presence-")
            guard presence || channel.hasPrefix("private-") else { return [] }
            expected = BirdAuth.channelSignature(secret: secret, socketID: socketID, channel: channel,
                                                 channelData: presence ? (event.channelData ?? "") : nil)
            what = "subscribe \(channel)"
        case .signin:
            expected = BirdAuth.signinSignature(secret: secret, socketID: socketID, userData: event.userData ?? "")
            what = "signin"
        default:
            return []
        }
        guard BirdAuth.signature(ofAuth: auth) != expected else { return [] }
        return [finding(context, conn: frame.conn, t: frame.t,
                        "\(what): auth is not the signature for socket id \(socketID)",
                        evidence: [Evidence(conn: frame.conn, t: frame.t, from: .client, summary: "\(what) auth \(auth)")])]
    }
}
