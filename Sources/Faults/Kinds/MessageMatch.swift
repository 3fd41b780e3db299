import Capture
import Protocols
import Vocabulary
import WebSocket

/// Which messages a message-level fault acts on: `event=NAME` (the decoded event's name,
/// exactly as sent), `kind=KIND` (what the decoded event means, `RealtimeEventKind`'s
/// names: `ping`, `subscribe`, `subscription_succeeded` ..., the same in every protocol),
/// `channel=NAME` (the decoded event's channel) and `dir=c2s|s2c|both`. With none given,
/// every whole data message (text or binary) matches; with `event=`, `kind=` or
/// `channel=`, only messages whose event the connection's protocol entry decoded.
struct MessageMatch: Sendable {
    static let parameters: Set<String> = ["event", "kind", "channel", "dir"]

    let senders: Set<Side>
    let event: String?
    let kind: RealtimeEventKind?
    let channel: String?

    init(_ rule: FaultRule) throws(FaultRuleError) {
        senders = try rule.directionOption("dir")
        event = try Self.name(rule, "event")
        kind = try Self.kind(rule, "kind")
        channel = try Self.name(rule, "channel")
    }

    /// The event kind an option names (`kind=pong`, `on-kind=subscription_succeeded`);
    /// nil when the option is absent.
    static func kind(_ rule: FaultRule, _ key: String) throws(FaultRuleError) -> RealtimeEventKind? {
        guard let option = rule.option(key) else { return nil }
        guard let kind = RealtimeEventKind(rawValue: option.value) else {
            throw rule.error("\(key)= must be an event kind (\(RealtimeEventKind.allCases.map(\.rawValue).joined(separator: ", "))), not '\(option.value)'", at: option)
        }
        return kind
    }

    static func name(_ rule: FaultRule, _ key: String) throws(FaultRuleError) -> String? {
        guard let option = rule.option(key) else { return nil }
        guard !option.value.isEmpty else { throw rule.error("\(key)= needs a name", at: option) }
        return option.value
    }

    func matches(_ frame: FaultFrame) -> Bool {
        guard senders.contains(frame.from), frame.opcode == .text || frame.opcode == .binary else { return false }
        if let event, frame.event?.name != event { return false }
        if let kind, frame.event?.kind != kind { return false }
        if let channel, frame.event?.channel != channel { return false }
        return true
    }

    /// "bird:pong messages on presence-x from the server": for reports.
    var description: String {
        var text = event.map { "\($0) messages" } ?? kind.map { "\($0.rawValue) messages" } ?? "messages"
        if event != nil, let kind { text += " of kind \(kind.rawValue)" }
        if let channel { text += " on \(channel)" }
        if senders.count == 1, let side = senders.first { text += " from the \(side.rawValue)" }
        return text
    }
}
