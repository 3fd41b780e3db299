import Capture
import ProtocolTable
import Protocols

/// `channels.auth-signature` (only with `--app-secret`): a subscribe's or sign-in's `auth`
/// is not the signature the protocol entry makes for this connection's socket id (Bird and
/// Pusher: the HMAC-SHA256 over it).
public struct ChannelsAuthSignature: LifecycleRule {
    public static let id = "channels.auth-signature"
    public static let severity = Severity.error
    public static let summary = "auth and sign-in signatures are the HMAC for this connection's socket id (--app-secret)"
    public static let observes: StepKinds = .clientFrame
    public static let judgesAuth = true
    /// The entry the client is judged with (detected, registered or the spec's), which
    /// knows how its auth is signed.
    let wire: any WireProtocol
    public init(spec: LifecycleSpec, entry: any WireProtocol) { wire = entry }
    /// Without an entry given: the one the spec's `events` names in the standard table.
    public init(spec: LifecycleSpec) { wire = ProtocolTable.standard.entry(for: spec.events.rawValue) }
    public static func notChecked(appSecret: String?) -> String? {
        appSecret == nil ? "needs --app-secret to verify signatures" : nil
    }

    public mutating func observe(_ step: TimelineStep, _ context: RuleContext) -> [Finding] {
        guard let secret = context.appSecret, let facts = step.frameFacts, facts.from == .client, facts.kind != nil,
              case .frame(let frame, let event?) = step, let socketID = context.withConnection(frame.conn, { $0.socketID }),
              let check = wire.checkAuth(of: event, socketID: socketID, secret: secret), !check.valid
        else { return [] }
        return [finding(context, conn: frame.conn, t: frame.t,
                        "\(check.what): auth is not the signature for socket id \(socketID)",
                        evidence: [Evidence(conn: frame.conn, t: frame.t, from: .client,
                                            summary: "\(check.what) auth \(check.auth)")])]
    }
}
