import Capture
import Vocabulary

/// `channels.stale-auth`: a private or presence subscribe reuses an `auth` sent on an
/// earlier connection, a signature over an old socket id.
public struct ChannelsStaleAuth: LifecycleRule {
    public static let id = "channels.stale-auth"
    public static let severity = Severity.error
    public static let summary = "private and presence subscribes carry a fresh auth on each connection"
    public static let observes: StepKinds = .clientFrame
    /// The auths this client sent, first sending of each, oldest first; at most
    /// `maximumKept` (a stale auth is reused from a recent connection: 64 auths cover
    /// dozens of reconnects), the oldest forgotten first and counted (`forgotten`).
    ///
    /// An auth is kept as two keyed 64-bit hashes of its text, not the text: a client of a
    /// long capture sends a fresh auth (some 90 bytes) on every connection, and 2,000
    /// clients' auths, their dictionary and evidence strings were the largest thing that
    /// grew with the input (22 MB at 1 GB of synthetic capture). A false match needs both
    /// hashes of two different auths to agree, about one chance in 2^128 per pair.
    var sent = SentAuths(capacity: maximumKept)
    static let maximumKept = 64
    /// Auths forgotten to stay within `maximumKept`, and the first of them: a reuse of one
    /// of them goes unseen, which the report says (`undetermined`).
    var forgotten = 0
    var firstForgotten: (conn: ConnectionID, t: Micros)?
    public init(spec: LifecycleSpec) {}

    public mutating func observe(_ step: TimelineStep, _ context: RuleContext) -> [Finding] {
        guard let facts = step.frameFacts, facts.from == .client, facts.kind == .subscribe,
              case .frame(let frame, let event?) = step, let auth = event.auth, let channel = event.targetChannel,
              channel.hasPrefix("private-") || channel.hasPrefix("presence-") else { return [] }
        let digest = Self.digest(auth)
        if let earlier = sent.entry(of: digest) {
            guard earlier.conn != frame.conn else { return [] }
            return [finding(context, conn: frame.conn, t: frame.t,
                            "subscribe \(channel) reuses the auth sent on connection \(earlier.conn)",
                            evidence: [Self.evidence(conn: earlier.conn, t: earlier.t, channel: sent.channel(of: earlier)),
                                       Self.evidence(conn: frame.conn, t: frame.t, channel: channel)])]
        }
        if let oldest = sent.append(digest, t: frame.t, conn: frame.conn, channel: channel) {
            if forgotten == 0 { firstForgotten = (oldest.conn, oldest.t) }
            forgotten += 1
        }
        return []
    }

    /// Auths forgotten: a later reuse of one of them was not looked for, so the rule could
    /// not say there was none.
    public func undetermined(at now: Micros, _ context: RuleContext) -> [Undetermined] {
        guard forgotten > 0, let first = firstForgotten else { return [] }
        return [undetermined(context, conn: first.conn, t: first.t, deadline: now,
                             "\(forgotten) auth\(forgotten == 1 ? "" : "s") of earlier subscribes forgotten from connection \(first.conn) on (the rule keeps the latest \(Self.maximumKept) per client): a reuse of one of them was not checked")]
    }

    static func evidence(conn: ConnectionID, t: Micros, channel: String) -> Evidence {
        Evidence(conn: conn, t: t, from: .client, summary: "subscribe \(channel)")
    }

    /// Two independent keyed hashes of the auth (the process's random seed: a crafted
    /// capture cannot aim at a collision).
    static func digest(_ auth: String) -> SentAuths.Digest {
        var first = Hasher()
        first.combine(auth)
        var second = Hasher()
        second.combine(0x9E37_79B9_7F4A_7C15 as UInt64)
        second.combine(auth)
        return SentAuths.Digest(first: UInt64(bitPattern: Int64(first.finalize())),
                                second: UInt64(bitPattern: Int64(second.finalize())))
    }
}
