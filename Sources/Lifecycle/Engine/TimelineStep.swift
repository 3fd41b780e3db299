import Capture
import Protocols
import Vocabulary
import WebSocket

/// One thing that happened to one client, as the engine hands it to the rules.
public enum TimelineStep: Sendable {
    /// A new connection (TCP open): an attempt, with its delay and schedule.
    case attempt(Attempt)
    /// The upgrade response (status 101 or a refusal).
    case upgradeResponse(conn: ConnectionID, t: Micros, status: Int?)
    /// The server's `connection_established` delivered to the client.
    case handshake(Handshake)
    /// Any other frame, with its decoded event when it carries one.
    case frame(FrameRecord, RealtimeEvent?)
    /// The client learned that the connection ended.
    case drop(Drop)
}

extension TimelineStep {
    /// Which kind of step this is, for `LifecycleRule.observes`.
    public var kind: StepKinds {
        switch self {
        case .attempt: .attempt
        case .upgradeResponse: .upgradeResponse
        case .handshake: .handshake
        case .drop: .drop
        case .frame(let frame, let event): .frame(frame, event)
        }
    }
}

/// What a rule tests a frame step by first, all plain values, read where the step lies
/// (`TimelineStep.frameFacts`).
///
/// Why: binding `case .frame(let frame, let event?) = step` copies the record and the event
/// out of the step (every reference in them retained, then released, through an outlined
/// copy), even when the rule reads only these fields and returns. Three rules doing so on
/// every client frame were 2.5% of the instructions on the synthetic capture. A rule tests
/// the facts first and binds the payload only for the frames it acts on.
public struct FrameFacts: Sendable, Hashable {
    public var conn: ConnectionID
    public var t: Micros
    public var from: Side
    public var opcode: Opcode
    public var action: FrameAction
    /// The event's kind; nil when the frame carries no event.
    public var kind: RealtimeEventKind?
}

extension TimelineStep {
    /// The frame's facts; nil for any other step. No copy of the record or the event.
    public var frameFacts: FrameFacts? {
        switch self {
        case .frame(let frame, let event):
            FrameFacts(conn: frame.conn, t: frame.t, from: frame.from, opcode: frame.opcode, action: frame.action,
                       kind: event?.kind)
        default:
            nil
        }
    }
}

extension StepKinds {
    /// The kind of the step `.frame(frame, event)`, known without making the step.
    static func frame(_ frame: FrameRecord, _ event: RealtimeEvent?) -> StepKinds {
        if frame.from == .client { return .clientFrame }
        if let kind = event?.kind, kind != .other { return .serverProtocolFrame }
        return .serverOtherFrame
    }
}

/// Kinds of timeline step, as a set: what a rule observes.
public struct StepKinds: OptionSet, Sendable, Hashable {
    public let rawValue: UInt8
    public init(rawValue: UInt8) { self.rawValue = rawValue }

    public static let attempt = StepKinds(rawValue: 1 << 0)
    public static let upgradeResponse = StepKinds(rawValue: 1 << 1)
    public static let handshake = StepKinds(rawValue: 1 << 2)
    public static let drop = StepKinds(rawValue: 1 << 3)
    /// Any frame from the client.
    public static let clientFrame = StepKinds(rawValue: 1 << 4)
    /// A server frame carrying a protocol event (its kind is not `.other`).
    public static let serverProtocolFrame = StepKinds(rawValue: 1 << 5)
    /// Any other server frame: application events, frames without an event.
    public static let serverOtherFrame = StepKinds(rawValue: 1 << 6)

    public static let all: StepKinds = [.attempt, .upgradeResponse, .handshake, .drop, .clientFrame,
                                        .serverProtocolFrame, .serverOtherFrame]
    /// Each single kind, in bit order.
    static let singles: [StepKinds] = (0..<7).map { StepKinds(rawValue: 1 << $0) }
}

/// A connection attempt and what the schedule says about it.
public struct Attempt: Sendable, Hashable {
    public var conn: ConnectionID
    public var t: Micros
    /// Attempts since the last successful connection (1 for the first after a drop from connected).
    public var number: Int
    /// The number the client would be at if it never reset after a success.
    public var numberWithoutReset: Int
    /// The state the client was in when it opened the connection.
    public var fromState: String
    /// The drop that preceded it on this client, if any.
    public var previousDrop: Drop?
    /// Time from the previous drop to this open (from the end of its close handshake with
    /// `delayFrom: closed`).
    public var delay: Micros?
    /// The delay of the attempt before this one in the same count, which decorrelated
    /// jitter grows from; nil for the first attempt after a reset.
    public var previousDelay: Micros? = nil
    /// When the current interruption began (the drop from connected), for phased schedules.
    public var interruptedAt: Micros?
    public var evidence: Evidence
}

public struct Handshake: Sendable, Hashable {
    public var conn: ConnectionID
    public var t: Micros
    public var socketID: String?
    public var activityTimeout: Double?
    public var evidence: Evidence
    /// The fault that rewrote the handshake on its way to the client (`strip-socket-id`,
    /// `activity-timeout`), if one did.
    public var rewrittenBy: String? = nil
}

/// How a connection ended, as the client learned it.
public struct Drop: Sendable, Hashable {
    public var conn: ConnectionID
    public var t: Micros
    public var closeCode: UInt16?
    public var closedBy: Side?
    /// What the client does next.
    public var action: CloseAction
    /// The connection had reached `connected`.
    public var wasConnected: Bool
    /// The state the client entered.
    public var newState: String
    /// "close 4009 from server", "RST from server", "upgrade refused 503".
    public var cause: String
    public var evidence: Evidence
    /// The fault whose frame or action ended the connection.
    public var fault: String?
    /// When the connection was over after the drop (its close handshake completed or its
    /// transport ended), once known: where `delayFrom: closed` counts the delay from.
    public var closedAt: Micros? = nil
    /// The number the next attempt will have (`Attempt.number`), when the interruption
    /// began and the delay of the attempt that dropped: what the schedule needs to know
    /// the next attempt's window before it comes (`reconnect.missing`).
    public var nextAttempt: Int = 1
    public var interruptedAt: Micros? = nil
    public var previousDelay: Micros? = nil
    /// The liveness check had failed when the client closed: a stale close, whatever its
    /// code (so a disconnect code does not read as the app's `disconnect()`).
    public var stale: Bool = false
    /// The client's short sessions counted at this drop (`backoff.shortSessions`), whose
    /// floor the next delay must respect; 0 without that option.
    public var shortSessions: Int = 0
}
