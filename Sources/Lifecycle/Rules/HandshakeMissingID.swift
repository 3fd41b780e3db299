import Capture
import Vocabulary

/// `handshake.missing-id`: after a handshake without `socket_id` the client must close the
/// socket within the immediate tolerance and send nothing but a close on it.
public struct HandshakeMissingID: LifecycleRule {
    public static let id = "handshake.missing-id"
    public static let severity = Severity.error
    public static let summary = "after a handshake without socket_id the client closes at once"
    public static let observes: StepKinds = [.handshake, .clientFrame]
    public static let hasTimers = true
    let spec: LifecycleSpec
    var pending: Handshake?
    var reported: Set<ConnectionID> = []
    public init(spec: LifecycleSpec) { self.spec = spec }

    public mutating func observe(_ step: TimelineStep, _ context: RuleContext) -> [Finding] {
        switch step {
        case .handshake(let h) where h.socketID == nil:
            pending = h
        case .frame:
            // The facts first (`FrameFacts`): the record and event are bound only to report.
            guard let facts = step.frameFacts, facts.from == .client, facts.opcode != .close,
                  let h = pending, h.conn == facts.conn, !reported.contains(facts.conn),
                  case .frame(let frame, let event) = step else { return [] }
            reported.insert(frame.conn)
            let what = event?.name ?? frame.opcode.name
            return [finding(context, conn: frame.conn, t: frame.t,
                            "sent \(what) \(formatSeconds(frame.t - h.t)) after a handshake without socket_id (only a close is allowed)",
                            evidence: [h.evidence, Evidence(conn: frame.conn, t: frame.t, from: .client, summary: what)])]
        default:
            break
        }
        return []
    }

    public func quietUntil(_ context: RuleContext) -> Micros {
        guard let h = pending, let view = context.connections[h.conn] else { return Micros.max }
        let deadline = h.t.addingSaturated(spec.tolerances.immediate)
        // `advance` clears `pending` at once when the close came in time, whatever the time.
        if let closed = view.clientClose?.t ?? view.droppedAt, closed <= deadline { return Micros.min }
        return deadline
    }

    /// A handshake without socket_id whose tolerance window was still open at the end.
    public func undetermined(at now: Micros, _ context: RuleContext) -> [Undetermined] {
        guard let h = pending, !reported.contains(h.conn) else { return [] }
        return [undetermined(context, conn: h.conn, t: h.t, deadline: h.t + spec.tolerances.immediate,
                             "the capture ended \(formatSeconds(now - h.t)) after a handshake without socket_id, within the \(formatSeconds(spec.tolerances.immediate)) allowed to close")]
    }

    public mutating func advance(to now: Micros, _ context: RuleContext) -> [Finding] {
        guard let h = pending, let view = context.connections[h.conn] else { return [] }
        let deadline = h.t.addingSaturated(spec.tolerances.immediate)
        if let closed = view.clientClose?.t ?? view.droppedAt, closed <= deadline { pending = nil; return [] }
        guard now > deadline else { return [] }
        pending = nil
        guard !reported.contains(h.conn) else { return [] }
        reported.insert(h.conn)
        return [finding(context, conn: h.conn, t: deadline,
                        "socket still open \(formatSeconds(now - h.t)) after a handshake without socket_id > bound \(formatSeconds(spec.tolerances.immediate))",
                        evidence: [h.evidence])]
    }
}
