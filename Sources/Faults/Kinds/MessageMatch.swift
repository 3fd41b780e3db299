import Capture
import Vocabulary
import WebSocket

/// Which messages a message-level fault acts on: `event=NAME` (the decoded event's name,
/// exactly as sent), `channel=NAME` (the decoded event's channel) and `dir=c2s|s2c|both`.
/// With none given, every whole data message (text or binary) matches; with `event=` or
/// `channel=`, only messages whose event the connection's protocol entry decoded.
struct MessageMatch: Sendable {
    static let parameters: Set<String> = ["event", "channel", "dir"]

    let senders: Set<Side>
    let event: String?
    let channel: String?

    init(_ rule: FaultRule) throws(FaultRuleError) {
        senders = try rule.directionOption("dir")
        event = try Self.name(rule, "event")
        channel = try Self.name(rule, "channel")
    }

    static func name(_ rule: FaultRule, _ key: String) throws(FaultRuleError) -> String? {
        guard let option = rule.option(key) else { return nil }
        guard !option.value.isEmpty else { throw rule.error("\(key)= needs a name", at: option) }
        return option.value
    }

    func matches(_ frame: FaultFrame) -> Bool {
        guard senders.contains(frame.from), frame.opcode == .text || frame.opcode == .binary else { return false }
        if let event, frame.event?.name != event { return false }
        if let channel, frame.event?.channel != channel { return false }
        return true
    }

    /// "bird:pong messages on presence-x from the server": for reports.
    var description: String {
        var text = event.map { "\($0) messages" } ?? "messages"
        if let channel { text += " on \(channel)" }
        if senders.count == 1, let side = senders.first { text += " from the \(side.rawValue)" }
        return text
    }
}
