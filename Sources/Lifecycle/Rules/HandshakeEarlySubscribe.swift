import Capture

/// `handshake.early-subscribe`: a subscribe, sign-in or client event before the server's
/// handshake arrived. After a handshake without `socket_id`, anything but a close is
/// `handshake.missing-id`'s to report, not this rule's.
public struct HandshakeEarlySubscribe: LifecycleRule {
    public static let id = "handshake.early-subscribe"
    public static let severity = Severity.error
    public static let summary = "no subscribe, signin or client event before the handshake"
    public static let observes: StepKinds = .clientFrame
    public init(spec: LifecycleSpec) {}

    public mutating func observe(_ step: TimelineStep, _ context: RuleContext) -> [Finding] {
        // The step's facts and the view's two fields read where they lie: a client event after
        // the handshake (most of them) costs no copy of the record, the event or the view.
        guard let facts = step.frameFacts, facts.from == .client, facts.kind?.needsHandshake == true,
              let openedAt = context.withConnection(facts.conn, { $0.handshakeAt == nil ? $0.openedAt : nil }),
              case .frame(let frame, let event?) = step
        else { return [] }
        return [finding(context, conn: frame.conn, t: frame.t,
                        "sent \(event.name)\(event.targetChannel.map { " " + $0 } ?? "") \(formatSeconds(frame.t - openedAt)) after open, before the handshake",
                        evidence: [Evidence(conn: frame.conn, t: frame.t, from: .client, summary: "text \(event.name)")])]
    }
}
