import Capture
import Protocols
import Vocabulary
import WebSocket

/// One kind of fault (toxiproxy's toxics are the model). Built from a parsed rule, it is
/// asked about its connection's events once its trigger has fired and answers with a verdict;
/// it never touches a socket. One file per kind, one line in `FaultRegistry`.
public protocol Fault: Sendable {
    /// The rule keyword: "stall-pongs", "close", ...
    static var kind: String { get }
    /// One line for help texts and "unknown kind" messages.
    static var summary: String { get }
    /// An example argument for messages ("4009"), or nil when the kind takes none.
    static var example: String? { get }
    /// The kind's own `key=value` options, besides the trigger keys every rule accepts.
    static var parameters: Set<String> { get }
    /// Kinds that answer the upgrade request itself (refusals) get `.upgrade` instead of
    /// `.armed`, before the proxy contacts the upstream.
    static var actsAtUpgrade: Bool { get }
    /// Why a rule of this kind cannot act on a connection that is already open (it acts on
    /// the upgrade or the handshake), or nil when it can. The control API's apply refuses
    /// such rules with this reason instead of accepting a no-op.
    static var openConnectionRefusal: String? { get }

    /// Checks the argument and options; throws with the bad part's position.
    init(_ rule: FaultRule) throws(FaultRuleError)

    /// The verdict on one event. Pure: time and randomness come in `context`.
    mutating func apply(_ event: FaultEvent, context: inout FaultContext) -> FaultVerdict
    /// Whether the fault, armed, needs the whole payload of a frame from `side` with this
    /// opcode before it is relayed (to drop, rewrite, delay or split it). Asked with the
    /// header alone for a large frame: no lets the relay pass it through as it arrives.
    /// Yes unless the kind says otherwise.
    func needsWholeFrame(from side: Side, opcode: Opcode) -> Bool
}

extension Fault {
    public func needsWholeFrame(from side: Side, opcode: Opcode) -> Bool { true }
    public static var example: String? { nil }
    public static var parameters: Set<String> { [] }
    public static var actsAtUpgrade: Bool { false }
    public static var openConnectionRefusal: String? {
        actsAtUpgrade ? "\(kind) answers the upgrade request, which an open connection has already made" : nil
    }
}

/// What a fault is told about.
public enum FaultEvent: Sendable, Hashable {
    /// The client's upgrade request arrived (only kinds with `actsAtUpgrade`).
    case upgrade
    /// The trigger fired: the WebSocket is open and every start condition holds.
    case armed
    /// A frame about to be relayed (only after `.armed`).
    case frame(FaultFrame)
    /// The wake-up the fault asked for in `FaultVerdict.wakeup` is due.
    case timer
    /// `side`'s TCP stream ended (FIN, RST or error); a verdict of `.drop` keeps the other
    /// side from hearing of it (a dead path delivers no FIN either), `.delay` holds a FIN back.
    case streamEnded(from: Side)
    /// The rule's `for=DUR` ran out: the fault stops here (normal service from now on). Its
    /// verdict may carry a report and effects; no event reaches it afterwards.
    case expired
}

/// A frame as faults see it.
public struct FaultFrame: Sendable, Hashable {
    public var from: Side
    public var opcode: Opcode
    /// Unmasked, and inflated when the message was compressed.
    public var payload: [UInt8]
    /// The message was permessage-deflate compressed: the proxy cannot rewrite it.
    public var compressed: Bool
    /// The event the connection's protocol table entry decoded from the frame, once, in
    /// the relay: faults match on its `kind` and `channel`, never on its spelled name
    /// (except `event=NAME`, which names it).
    public var event: RealtimeEvent?

    public init(from: Side, opcode: Opcode, payload: [UInt8], compressed: Bool = false, event: RealtimeEvent? = nil) {
        self.from = from
        self.opcode = opcode
        self.payload = payload
        self.compressed = compressed
        self.event = event
    }
}

/// Time, randomness and the connection's protocol for one `apply` call.
public struct FaultContext: Sendable {
    public var now: Micros
    /// Seeded per rule and connection: the same seed gives the same draws.
    public var random: SeededGenerator
    /// The connection's protocol table entry (nil: none decodes its messages): what the
    /// handshake faults ask to rewrite the handshake, in whatever dialect it came.
    public var wire: (any WireProtocol)?

    public init(now: Micros, random: SeededGenerator, wire: (any WireProtocol)? = nil) {
        self.now = now
        self.random = random
        self.wire = wire
    }
}

/// What to do with the frame in question (ignored for other events).
public enum FrameFate: Sendable, Hashable {
    case pass
    /// Swallow it: the other side never sees it.
    case drop
    /// Send it this much later (order within its direction is kept by the relay).
    case delay(Micros)
    /// Send this payload instead (same opcode and flags).
    case rewrite([UInt8])
    /// Send a whole data message as this many frames (the first with the opcode, the rest
    /// continuations). Frames that are not whole data messages are sent as they are.
    case fragment(Int)
    /// Write the frame's bytes in pieces of these sizes (the last piece takes what is left),
    /// `gap` apart: one TCP write each, for a peer's reassembly to cope with.
    case slice(pieces: [Int], gap: Micros)
}

/// Something a fault makes the relay do besides the frame in hand.
public enum FaultEffect: Sendable, Hashable {
    /// Send a close frame to `to`, pretending to be the other peer, wait briefly for its
    /// reply, then close that socket; the other side's socket is closed (FIN) at once.
    case close(to: Side, code: UInt16, reason: String)
    /// End both TCP connections with FIN, no close frame.
    case drop
    /// End both TCP connections with RST.
    case reset
    /// Send a text frame to `to`, pretending to be the other peer.
    case inject(to: Side, payload: [UInt8])
    /// Send a data message (a copy of one relayed, or one held back) to `to` with its opcode.
    case resend(to: Side, opcode: Opcode, payload: [UInt8])
    /// Answer the upgrade request with this HTTP status; never contact the upstream.
    case refuseHTTP(status: Int)
    /// Accept the upgrade without the upstream, then close with this code.
    case refuseUpgrade(code: UInt16, reason: String)
}

/// A fault's answer.
public struct FaultVerdict: Sendable, Hashable {
    public var frame: FrameFate
    public var effects: [FaultEffect]
    /// When set, the relay writes a fault record with this text ("sent close 4009 to client").
    public var report: String?
    /// The side the report is about.
    public var target: Side?
    /// Ask to be called with `.timer` at this time (e.g. the end of `for=DUR`).
    public var wakeup: Micros?

    public init(frame: FrameFate = .pass, effects: [FaultEffect] = [], report: String? = nil,
                target: Side? = nil, wakeup: Micros? = nil) {
        self.frame = frame
        self.effects = effects
        self.report = report
        self.target = target
        self.wakeup = wakeup
    }

    public static let pass = FaultVerdict()
}
