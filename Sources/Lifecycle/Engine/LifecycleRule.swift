import Capture
import Protocols
import Vocabulary

/// One lifecycle rule. One instance per client: it sees that client's steps in time order
/// and keeps whatever little state it needs. Adding a rule is one file and one line in
/// `RuleRegistry`. Numbers come from the spec, never from the checker.
public protocol LifecycleRule: Sendable {
    static var id: String { get }
    static var severity: Severity { get }
    /// Whose behaviour it judges; server rules are listed apart in reports.
    static var party: Party { get }
    /// What the rule checks, one line, for reports and `--help`.
    static var summary: String { get }
    init(spec: LifecycleSpec)
    /// One instance for a client judged with `entry`, the protocol table entry that decodes
    /// its messages (the detected or registered one: `AnalyzerOptions.makeEntry`), for a
    /// rule that asks the entry what only it knows (how its auth is signed). Default:
    /// `init(spec:)`.
    init(spec: LifecycleSpec, entry: any WireProtocol)
    /// A step of this client's timeline.
    mutating func observe(_ step: TimelineStep, _ context: RuleContext) -> [Finding]
    /// The kinds of step `observe` acts on. The engine hands the rule only those, so for
    /// any other step `observe` must find nothing and change nothing. Most frames are
    /// server application events that no rule looks at; skipping them saves a dynamic call
    /// per rule per frame. Default: every step.
    static var observes: StepKinds { get }
    /// Whether `advance` can find anything. The engine calls `advance` on every record and
    /// on every client once a second of record time, so only rules with timer checks (which
    /// say `true` here) are asked; the others would only cost time on large captures.
    static var hasTimers: Bool { get }
    /// Time reached `now` (from record times, never the wall clock): for timer checks.
    /// Called only when `hasTimers` is true (`finish` is always called).
    mutating func advance(to now: Micros, _ context: RuleContext) -> [Finding]
    /// A time up to which `advance` (called with any `now` at or before it) can neither
    /// find anything nor change the rule, for as long as no step reaches the rule and the
    /// context changes only by a later receipt (`ConnectionView.lastReceivedAt` moving
    /// forward). The engine skips `advance` until then: on large captures most records
    /// are such receipts, and asking every timer rule of the client on each of them was
    /// the engine's largest cost. `Micros.max` means "not until a step or another change";
    /// the default, `Micros.min`, means "always ask".
    func quietUntil(_ context: RuleContext) -> Micros
    /// The input ended at `now`.
    mutating func finish(at now: Micros, _ context: RuleContext) -> [Finding]
    /// After `finish`: the checks this rule had opened and could not decide before the input
    /// ended (a window still open). Default: none.
    func undetermined(at now: Micros, _ context: RuleContext) -> [Undetermined]
    /// Why this rule is not checked at all with these options (nil: it is). Default: nil.
    static func notChecked(appSecret: String?) -> String?
    /// Whether the rule verifies the auth that subscribes and sign-ins carry: it has nothing
    /// to check on an input without any (`RuleRegistry.unchecked`). Default: false.
    static var judgesAuth: Bool { get }
}

extension LifecycleRule {
    public init(spec: LifecycleSpec, entry: any WireProtocol) { self.init(spec: spec) }
    public static var party: Party { .client }
    public static var hasTimers: Bool { false }
    public static var observes: StepKinds { .all }
    public mutating func advance(to now: Micros, _ context: RuleContext) -> [Finding] { [] }
    public func quietUntil(_ context: RuleContext) -> Micros { Micros.min }
    public mutating func finish(at now: Micros, _ context: RuleContext) -> [Finding] { advance(to: now, context) }
    public func undetermined(at now: Micros, _ context: RuleContext) -> [Undetermined] { [] }
    public static func notChecked(appSecret: String?) -> String? { nil }
    public static var judgesAuth: Bool { false }

    /// `quietUntil`, asked through a mutable access: the engine's walk of a client's timer
    /// rules (an array of existentials) copied each rule out for the non-mutating call,
    /// retaining what it holds, which the profile showed; a mutable access only projects it.
    mutating func askQuietUntil(_ context: RuleContext) -> Micros { quietUntil(context) }

    /// An undetermined check of this rule for the context's client.
    public func undetermined(_ context: RuleContext, conn: ConnectionID, t: Micros, deadline: Micros,
                             _ message: String) -> Undetermined {
        Undetermined(rule: Self.id, severity: Self.severity, party: Self.party, client: context.client,
                     conn: conn, t: t, deadline: deadline, message: message)
    }

    /// A finding of this rule for the context's client.
    /// `fault`: the injected fault that explains the finding (the judged party did nothing
    /// wrong); `after`: one the finding came after without being explained by it.
    public func finding(_ context: RuleContext, conn: ConnectionID, t: Micros, _ message: String,
                        evidence: [Evidence], fault: String? = nil, after: String? = nil) -> Finding {
        Finding(rule: Self.id, severity: Self.severity, party: Self.party, client: context.client,
                conn: conn, t: t, message: message, evidence: evidence, causedByFault: fault,
                afterFault: fault == nil ? after : nil)
    }
}

/// What a rule may read about its client besides the step: the spec, options, and the
/// engine's per-connection facts (kept once, not by every rule). The timeline keeps one
/// and changes it in place; rules read it, borrowed.
public struct RuleContext: Sendable {
    public var spec: LifecycleSpec
    public var client: String
    public var appSecret: String?
    /// The client's open (or last) connections by id.
    public var connections: ConnectionViews
    /// The client's newest connection.
    public var current: ConnectionID?
    /// The client's state, as a number of `states`.
    public var stateID: StateID
    public let states: StateTable

    /// The client's state by name.
    public var state: String { states.name(of: stateID) }

    public var currentConnection: ConnectionView? { current.flatMap { connections[$0] } }

    /// `body` of the client's newest connection's view, read where it lies; nil without one.
    /// `currentConnection` copies the whole view out (some 500 bytes and a dozen counted
    /// references), which the timer rules' checks, asked on every walk of a client's
    /// timers, showed in the profile; `body` only borrows it.
    public func withCurrentConnection<Result>(_ body: (ConnectionView) -> Result?) -> Result? {
        guard let current else { return nil }
        return withConnection(current, body)
    }

    /// `body` of the view of `conn`, read where it lies (see `withCurrentConnection`).
    public func withConnection<Result>(_ conn: ConnectionID, _ body: (ConnectionView) -> Result?) -> Result? {
        guard let i = connections.index(of: conn) else { return nil }
        return body(connections[at: i])
    }
}

/// Facts about one connection that several rules share.
public struct ConnectionView: Sendable, Hashable {
    public var conn: ConnectionID
    public var openedAt: Micros
    public var handshakeAt: Micros?
    public var socketID: String?
    /// A handshake arrived without `socket_id`.
    public var handshakeMissingID = false
    public var connectedAt: Micros?
    /// When the server's 101 was relayed (the WebSocket opened).
    public var upgradedAt: Micros?
    /// The activity timeout in force (spec default or the handshake's value).
    public var activityTimeout: Micros
    /// Last frame the client received (delivered, not dropped by a fault).
    public var lastReceivedAt: Micros
    /// The last data frame (text or binary) the client received, and the last it sent:
    /// what the server-timeout model's deadlines count from. `Micros.min`: none yet.
    public var lastMessageReceivedAt = Micros.min
    public var lastMessageSentAt = Micros.min
    /// The client's latest ping (event or frame), if any since the last receipt.
    public var lastPing: Evidence?
    /// The first frame delivered from the server after `lastPing`.
    public var receivedSincePing: Evidence?
    /// The first pong delivered after `lastPing`.
    public var pongSincePing: Evidence?
    /// The first close frame the client sent.
    public var clientClose: Evidence?
    public var clientCloseCode: UInt16?
    /// The server's close frame, if any (delivered or not).
    public var serverClose: Evidence?
    /// When the client learned the connection ended.
    public var droppedAt: Micros?
    /// When the connection was over: its close handshake completed or its transport ended.
    public var closedAt: Micros?
    /// The ref of the client's latest ping, for protocols that match the reply by it.
    public var lastPingRef: String?
    /// The server's latest ping (server-driven liveness), and the client's first pong after it.
    public var lastServerPing: Evidence?
    public var pongToServerPing: Evidence?
    /// The server's ping period and timeout in force (the spec's, or as the server announced).
    public var serverPingInterval: Micros = 0
    public var serverPingTimeout: Micros = 0
    /// A fault touched a frame of this connection (its rule text), most recent.
    public var lastFault: String?
    /// The fault that swallowed a pong meant for the client since `lastPing`, if one did:
    /// what explains a missing pong.
    public var swallowedPongFault: String?
    /// What the latest message ending the session said (delivered, not dropped) and who
    /// sent it, when the spec's client honours such messages. A server's replaces any
    /// earlier one; the client's counts only when no message ended the session before it.
    public var ending: SessionEnding?
    public var endingFrom: Side = .server

    public init(conn: ConnectionID, openedAt: Micros, activityTimeout: Micros) {
        self.conn = conn
        self.openedAt = openedAt
        self.activityTimeout = activityTimeout
        self.lastReceivedAt = openedAt
    }

    /// Open as far as the client knows.
    public var isOpen: Bool { droppedAt == nil && clientClose == nil }
}
