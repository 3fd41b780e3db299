import Capture
import Vocabulary

/// `channels.resubscribe`: channels subscribed when a connection ended (by a drop or by
/// `disconnect()`) must be subscribed again within the window after the next `connected`.
/// A subscribe the server refuses still counts as sent.
public struct ChannelsResubscribe: LifecycleRule {
    public static let id = "channels.resubscribe"
    public static let severity = Severity.error
    public static let summary = "lost subscriptions are sent again within the window after connected"
    public static let observes: StepKinds = [.attempt, .drop, .clientFrame, .serverProtocolFrame]
    public static let hasTimers = true
    let spec: LifecycleSpec
    /// Subscribed (succeeded, not unsubscribed) on the current connection.
    var subscribed: Set<String> = []
    /// Owed from earlier connections, with the evidence of their last subscription.
    var owed: [String: Evidence] = [:]
    var checkedConn: ConnectionID?
    /// When the owed channels were lost: only a connection opened later owes them.
    var owedSince: Micros = 0
    public init(spec: LifecycleSpec) { self.spec = spec }

    public mutating func observe(_ step: TimelineStep, _ context: RuleContext) -> [Finding] {
        switch step {
        case .frame:
            // The kind first: the channel is read from the event's data (a JSON skim, and
            // a string made), which most frames this rule sees (client events, pings) never
            // need; and the record and event are bound only then (`FrameFacts`).
            guard let facts = step.frameFacts, let kind = facts.kind else { return [] }
            let wanted = facts.from == .client ? kind == .subscribe || kind == .unsubscribe : kind == .subscriptionSucceeded
            guard wanted, case .frame(let frame, let event?) = step, let channel = event.targetChannel else { return [] }
            if frame.from == .client {
                if event.kind == .subscribe { owed.removeValue(forKey: channel) }
                if event.kind == .unsubscribe { subscribed.remove(channel); owed.removeValue(forKey: channel) }
            } else if event.kind == .subscriptionSucceeded {
                subscribed.insert(channel)
                lastSuccess[channel] = Success(conn: frame.conn, t: frame.t)
            }
        case .drop(let drop):
            guard drop.conn == context.current else { return [] }
            for channel in subscribed { owed[channel] = lastSuccess[channel]?.evidence(channel) ?? drop.evidence }
            if !subscribed.isEmpty { owedSince = drop.t }
            subscribed.removeAll()
        case .attempt:
            checkedConn = nil
        default:
            break
        }
        return []
    }

    /// Each channel's latest `subscription_succeeded`, spelled out as evidence only when a
    /// drop makes the channel owed: a client subscribes far more often than it drops, and
    /// the summary string was made for every success.
    var lastSuccess: [String: Success] = [:]

    struct Success: Sendable {
        var conn: ConnectionID
        var t: Micros

        func evidence(_ channel: String) -> Evidence {
            Evidence(conn: conn, t: t, from: .server, summary: "subscription_succeeded \(channel)")
        }
    }

    public func quietUntil(_ context: RuleContext) -> Micros {
        guard !owed.isEmpty, let view = context.currentConnection, let connected = view.connectedAt,
              view.openedAt >= owedSince, checkedConn != view.conn else { return Micros.max }
        let deadline = connected + spec.channels.resubscribeWindow
        if let dropped = view.droppedAt, dropped <= deadline { return Micros.max }
        return deadline
    }

    /// Channels still owed when the input ended, on a connection whose window had started
    /// (it reached `connected`) but not closed: the capture ended first, or the connection
    /// did before any later one reached `connected`.
    public func undetermined(at now: Micros, _ context: RuleContext) -> [Undetermined] {
        guard !owed.isEmpty, let view = context.currentConnection, let connected = view.connectedAt,
              view.openedAt >= owedSince, checkedConn != view.conn else { return [] }
        let deadline = connected + spec.channels.resubscribeWindow
        let cut = view.droppedAt.map { "connection \(view.conn) ended at \(formatSeconds($0))" }
            ?? "the capture ended at \(formatSeconds(now))"
        return [undetermined(context, conn: view.conn, t: connected, deadline: deadline,
                             "\(owed.keys.sorted().joined(separator: ", ")) not subscribed again yet; \(cut), before the \(formatSeconds(spec.channels.resubscribeWindow)) window after connected at \(formatSeconds(connected)) closed")]
    }

    public mutating func advance(to now: Micros, _ context: RuleContext) -> [Finding] {
        guard !owed.isEmpty, let view = context.currentConnection, let connected = view.connectedAt,
              view.openedAt >= owedSince, checkedConn != view.conn else { return [] }
        let deadline = connected + spec.channels.resubscribeWindow
        guard now > deadline else { return [] }
        if let dropped = view.droppedAt, dropped <= deadline { return [] }
        checkedConn = view.conn
        let missing = owed.keys.sorted()
        let evidence = missing.compactMap { owed[$0] }
        owed.removeAll()
        return [finding(context, conn: view.conn, t: deadline,
                        "not subscribed again within \(formatSeconds(spec.channels.resubscribeWindow)) of connected: \(missing.joined(separator: ", "))",
                        evidence: evidence)]
    }
}
