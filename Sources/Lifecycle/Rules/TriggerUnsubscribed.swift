import Capture
import Vocabulary

/// `trigger.unsubscribed`: a client event on a channel whose subscription has not
/// succeeded on the current connection (the library must return false instead of sending).
public struct TriggerUnsubscribed: LifecycleRule {
    public static let id = "trigger.unsubscribed"
    public static let severity = Severity.error
    public static let summary = "client events only on channels subscribed on this connection"
    public static let observes: StepKinds = [.attempt, .clientFrame, .serverProtocolFrame]
    var subscribed: [ConnectionID: Set<String>] = [:]
    public init(spec: LifecycleSpec) {}

    public mutating func observe(_ step: TimelineStep, _ context: RuleContext) -> [Finding] {
        switch step {
        case .attempt:
            // A new connection starts with nothing subscribed. Its entry is made by its first
            // success (a missing entry reads as an empty set): a client that never
            // subscribes keeps no dictionary.
            subscribed = [:]
        case .frame:
            // The facts first (`FrameFacts`): the record and event are bound only for the
            // three kinds this rule reads.
            guard let facts = step.frameFacts, let kind = facts.kind,
                  facts.from == .server ? kind == .subscriptionSucceeded : kind == .unsubscribe || kind == .clientEvent,
                  case .frame(let frame, let event?) = step else { return [] }
            if frame.from == .server, event.kind == .subscriptionSucceeded, let channel = event.targetChannel {
                subscribed[frame.conn, default: []].insert(channel)
            } else if frame.from == .client, event.kind == .unsubscribe, let channel = event.targetChannel {
                subscribed[frame.conn]?.remove(channel)
            } else if frame.from == .client, event.kind == .clientEvent {
                let channel = event.channel ?? "(no channel)"
                guard !(subscribed[frame.conn]?.contains(channel) ?? false) else { return [] }
                return [finding(context, conn: frame.conn, t: frame.t,
                                "\(event.name) sent on \(channel) before its subscription succeeded on this connection",
                                evidence: [Evidence(conn: frame.conn, t: frame.t, from: .client, summary: "text \(event.name) \(channel)")])]
            }
        default:
            break
        }
        return []
    }
}
