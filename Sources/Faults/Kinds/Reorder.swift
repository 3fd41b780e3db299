import Capture
import Vocabulary
import WebSocket

/// `reorder [within=DUR] [event=NAME] [kind=KIND] [channel=NAME] [dir=c2s|s2c]`: hold a matching
/// message back and send it right after the next data message from the same sender, so the
/// two arrive swapped. With no next message within DUR (default 1s) it is sent then; a
/// close frame from its sender first discards it (nothing may follow a close).
public struct Reorder: Fault {
    public static let kind = "reorder"
    public static let summary = "send matching messages after the next one [within=1s] [event=NAME] [kind=KIND] [channel=NAME] [dir=c2s|s2c]"
    public static let parameters: Set<String> = MessageMatch.parameters.union(["within"])

    struct Held: Sendable {
        var from: Side
        var opcode: Opcode
        var payload: [UInt8]
    }

    public let within: Micros
    let match: MessageMatch
    var held: Held?
    var active = false

    public init(_ rule: FaultRule) throws(FaultRuleError) {
        if rule.argument != nil { throw rule.argumentError("reorder takes no argument (use within=, event=, channel=, dir=)") }
        within = try rule.durationOption("within") ?? 1_000_000
        match = try MessageMatch(rule)
    }

    public mutating func apply(_ event: FaultEvent, context: inout FaultContext) -> FaultVerdict {
        switch event {
        case .armed:
            active = true
            return FaultVerdict(report: "reordering \(match.description)")
        case .frame(let frame) where active:
            if let held, held.from == frame.from {
                if frame.opcode == .close {
                    self.held = nil
                    return FaultVerdict(report: "discarded a held message: the \(frame.from.rawValue)'s close came first",
                                        target: frame.from.other)
                }
                guard frame.opcode == .text || frame.opcode == .binary else { return .pass }
                self.held = nil
                return FaultVerdict(effects: [release(held)])
            }
            guard held == nil, match.matches(frame) else { return .pass }
            held = Held(from: frame.from, opcode: frame.opcode, payload: frame.payload)
            return FaultVerdict(frame: .drop, wakeup: context.now.addingClamped(within))
        case .timer, .expired:
            guard let held else { return .pass }
            self.held = nil
            return FaultVerdict(effects: [release(held)])
        default:
            return .pass
        }
    }

    func release(_ held: Held) -> FaultEffect {
        .resend(to: held.from.other, opcode: held.opcode, payload: held.payload)
    }
}
