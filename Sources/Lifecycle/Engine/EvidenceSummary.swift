import Capture
import Protocols
import WebSocket

/// What an evidence summary is made of, kept as it came and spelled out only when the
/// summary is read (`Evidence.summary`): the engine keeps evidence of every client's pings,
/// first receipts, pongs, closes and subscriptions, and only the few that reach a finding
/// or a report are ever read. Keeping the facts retains strings and a small payload the
/// record already holds; spelling them out made a string (two, growing) per kept frame.
enum EvidenceSummary: Sendable {
    /// Spelled out already.
    case given(String)
    /// "LABEL VALUE": "subscribe private-x", "tcp open from 10.0.0.1:5000".
    case labelled(StaticString, String)
    /// A frame with a protocol event (and no close code): "text bird:ping private-x".
    case event(Opcode, FrameAction, name: String, channel: String?)
    /// Any other frame, with the payload its summary shows: a close frame's code and
    /// reason, a text frame's body (empty for the others, which show none of it).
    case frame(Opcode, FrameAction, payload: [UInt8])

    /// Payloads up to this many bytes are kept for the summary; a longer one is summarized
    /// at once, so a kept evidence never holds a large frame alive.
    static let maximumKeptPayload = 256

    /// The summary of `record` with its decoded `event`: "text bird:subscribe private-x",
    /// "close 4201 'pong timeout'", "text {"a":1}" (bodies cut to 60 characters), with
    /// " (dropped)" and the like when a fault acted on the frame.
    static func of(_ record: FrameRecord, _ event: RealtimeEvent?) -> EvidenceSummary {
        if record.closeCode == nil, let event {
            return .event(record.opcode, record.action, name: event.name, channel: event.targetChannel)
        }
        let shown = record.opcode == .close || record.opcode == .text
        let facts = EvidenceSummary.frame(record.opcode, record.action, payload: shown ? record.payload : [])
        return shown && record.payload.count > maximumKeptPayload ? .given(facts.text) : facts
    }

    var text: String {
        switch self {
        case .given(let text):
            return text
        case .labelled(let label, let value):
            return "\(label) \(value)"
        case .event(let opcode, let action, let name, let channel):
            var text = opcode.name + " " + name
            if let channel { text += " \(channel)" }
            return text + Self.note(action)
        case .frame(let opcode, let action, let payload):
            var text = opcode.name
            if opcode == .close, payload.count >= 2 {
                text += " \(UInt16(payload[0]) << 8 | UInt16(payload[1]))"
                if payload.count > 2 { text += " '\(String(decoding: payload[2...], as: UTF8.self))'" }
            } else if opcode == .text, let body = String(validating: payload, as: UTF8.self) {
                text += " " + (body.count > 60 ? String(body.prefix(57)) + "..." : body)
            }
            return text + Self.note(action)
        }
    }

    /// " (dropped)", " (injected)", " (delayed)": what a fault did to the frame; nothing
    /// for a frame relayed or observed as sent.
    private static func note(_ action: FrameAction) -> String {
        action == .forwarded || action == .observed ? "" : " (\(action.name))"
    }
}
