import Capture
import Vocabulary

/// `channels.stale-auth`: a private or presence subscribe reuses an `auth` sent on an
/// earlier connection, a signature over an old socket id.
public struct ChannelsStaleAuth: LifecycleRule {
    public static let id = "channels.stale-auth"
    public static let severity = Severity.error
    public static let summary = "private and presence subscribes carry a fresh auth on each connection"
    public static let observes: StepKinds = .clientFrame
    /// Auths by the connection they were first sent on; bounded, so that memory stays flat
    /// however many connections a client makes (a stale auth is reused from a recent
    /// connection: 64 auths cover dozens of reconnects).
    /// Each kept auth's first subscribe, spelled out as evidence only for a finding.
    var seen: [String: Subscribe] = [:]
    static let maximumKept = 64
    public init(spec: LifecycleSpec) {}

    public mutating func observe(_ step: TimelineStep, _ context: RuleContext) -> [Finding] {
        guard case .frame(let frame, let event?) = step, frame.from == .client, event.kind == .subscribe,
              let auth = event.auth, let channel = event.targetChannel,
              channel.hasPrefix("private-") || channel.hasPrefix("presence-") else { return [] }
        let here = Subscribe(conn: frame.conn, t: frame.t, channel: channel)
        if let earlier = seen[auth] {
            guard earlier.conn != frame.conn else { return [] }
            return [finding(context, conn: frame.conn, t: frame.t,
                            "subscribe \(channel) reuses the auth sent on connection \(earlier.conn)",
                            evidence: [earlier.evidence, here.evidence])]
        }
        if seen.count >= Self.maximumKept { seen.removeAll() }
        seen[auth] = here
        return []
    }

    /// A subscribe as kept: its evidence's summary is made only when a finding shows it
    /// (nearly every subscribe reuses no auth).
    struct Subscribe: Sendable {
        var conn: ConnectionID
        var t: Micros
        var channel: String

        var evidence: Evidence { Evidence(conn: conn, t: t, from: .client, summary: "subscribe \(channel)") }
    }
}
