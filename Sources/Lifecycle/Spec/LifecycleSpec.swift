import Capture
import ProtocolTable
import Protocols

/// A client library's lifecycle contract as data: states, what each close code makes the
/// client do, its reconnect schedule, its keep-alive timeouts, channel rules, tolerances
/// and which rules apply. Built-in specs are JSON files loaded by `SpecLoader`, the same
/// way as a user's `--spec FILE`. Times are in microseconds here, seconds in the file.
public struct LifecycleSpec: Sendable, Hashable {
    // The fields live in one shared, copy-on-write box. Every rule instance of every client
    // keeps the spec, and inline it was about 300 bytes: with some twenty rules that made
    // each client cost about 9 KB (200,000 connections never ended took `analyze` to
    // 1.85 GB). Shared, a copy is one reference.
    struct Fields: Sendable, Hashable {
        var name: String
        var description: String
        var events: EventLevel
        var prefix: String?
        var states: StateNames
        var connectedOn: ConnectedOn
        var closeBands: [CloseBand]
        var disconnectCodes: [UInt16]
        var refusalStatuses: [Int]
        var backoff: BackoffSpec
        var stale: StaleSpec?
        var channels: ChannelSpec
        var tolerances: Tolerances
        var rules: [String]
        var reportDelays = false
        var honoursServerEndings = false
    }

    /// @unchecked: `fields` is written only through `update`, on a box no other spec shares.
    private final class Storage: @unchecked Sendable {
        var fields: Fields
        init(_ fields: Fields) { self.fields = fields }
    }

    private var storage: Storage

    init(name: String, description: String, events: EventLevel, prefix: String?, states: StateNames,
         connectedOn: ConnectedOn, closeBands: [CloseBand], disconnectCodes: [UInt16], refusalStatuses: [Int],
         backoff: BackoffSpec, stale: StaleSpec?, channels: ChannelSpec, tolerances: Tolerances, rules: [String]) {
        storage = Storage(Fields(name: name, description: description, events: events, prefix: prefix, states: states,
                                 connectedOn: connectedOn, closeBands: closeBands, disconnectCodes: disconnectCodes,
                                 refusalStatuses: refusalStatuses, backoff: backoff, stale: stale, channels: channels,
                                 tolerances: tolerances, rules: rules))
    }

    private mutating func update(_ change: (inout Fields) -> Void) {
        if !isKnownUniquelyReferenced(&storage) { storage = Storage(storage.fields) }
        change(&storage.fields)
    }

    public static func == (a: LifecycleSpec, b: LifecycleSpec) -> Bool {
        a.storage === b.storage || a.storage.fields == b.storage.fields
    }

    public func hash(into hasher: inout Hasher) { storage.fields.hash(into: &hasher) }

    public var name: String {
        get { storage.fields.name }
        set { update { $0.name = newValue } }
    }
    public var description: String {
        get { storage.fields.description }
        set { update { $0.description = newValue } }
    }
    /// Which wire events the spec can see.
    public var events: EventLevel {
        get { storage.fields.events }
        set { update { $0.events = newValue } }
    }
    /// The Bird/Pusher event prefix, when fixed by the spec (else detected or `--protocol-prefix`).
    public var prefix: String? {
        get { storage.fields.prefix }
        set { update { $0.prefix = newValue } }
    }
    public var states: StateNames {
        get { storage.fields.states }
        set { update { $0.states = newValue } }
    }
    /// When a connection counts as connected.
    public var connectedOn: ConnectedOn {
        get { storage.fields.connectedOn }
        set { update { $0.connectedOn = newValue } }
    }
    /// Close-code bands and the client's reaction; codes in no band mean `backoff`.
    public var closeBands: [CloseBand] {
        get { storage.fields.closeBands }
        set { update { $0.closeBands = newValue } }
    }
    /// Codes the client sends first when the app called `disconnect()`.
    public var disconnectCodes: [UInt16] {
        get { storage.fields.disconnectCodes }
        set { update { $0.disconnectCodes = newValue } }
    }
    /// Upgrade response statuses that are fatal refusals (state `failed`); others mean backoff.
    public var refusalStatuses: [Int] {
        get { storage.fields.refusalStatuses }
        set { update { $0.refusalStatuses = newValue } }
    }
    public var backoff: BackoffSpec {
        get { storage.fields.backoff }
        set { update { $0.backoff = newValue } }
    }
    /// Nil when the spec has no keep-alive check.
    public var stale: StaleSpec? {
        get { storage.fields.stale }
        set { update { $0.stale = newValue } }
    }
    public var channels: ChannelSpec {
        get { storage.fields.channels }
        set { update { $0.channels = newValue } }
    }
    public var tolerances: Tolerances {
        get { storage.fields.tolerances }
        set { update { $0.tolerances = newValue } }
    }
    /// Rule ids that apply, in report order.
    public var rules: [String] {
        get { storage.fields.rules }
        set { update { $0.rules = newValue } }
    }
    /// Whether each retry's transition to connecting names its measured delay and attempt
    /// (an observation, judged by no rule): what a spec that knows no client's policy, such
    /// as `websocket`, can still tell about the reconnects it saw.
    public var reportDelays: Bool {
        get { storage.fields.reportDelays }
        set { update { $0.reportDelays = newValue } }
    }

    /// Whether the client obeys a server message that ends its session (`SessionEnding`):
    /// after one that is final the drop leaves it failed (a reconnect is `failed.retried`),
    /// after an invitation the drop is retried by the backoff (`reconnect.missing`).
    public var honoursServerEndings: Bool {
        get { storage.fields.honoursServerEndings }
        set { update { $0.honoursServerEndings = newValue } }
    }

    /// Which entry of the protocol table decodes the clients' messages: any key or alias
    /// registered in `ProtocolTable` (`realtime`, `pusher` and `bird` choose Bird/Pusher;
    /// `connection` and `websocket` the connection-level entry, which decodes nothing). A
    /// new protocol entry is accepted here as soon as it is registered in the table.
    public struct EventLevel: RawRepresentable, Sendable, Hashable {
        public let rawValue: String

        /// Nil for a name no entry of the table claims.
        public init?(rawValue: String) {
            guard ProtocolTable.standard.registration(named: rawValue) != nil else { return nil }
            self.rawValue = rawValue
        }

        private init(registered name: String) { rawValue = name }

        /// Bird/Pusher JSON events are decoded (handshake, pings, channels).
        public static let realtime = EventLevel(registered: "realtime")
        /// Only connection-level events: TCP open, upgrade, close, FIN/RST.
        public static let connection = EventLevel(registered: "connection")

        /// Every value a spec may give: each entry's aliases and key, in table order.
        public static var names: [String] { ProtocolTable.standard.registrations.flatMap { $0.aliases + [$0.key] } }

        /// Whether messages are decoded into protocol events: every entry but the
        /// connection-level one (whose clients need no fallback to it).
        public var decodesEvents: Bool {
            ProtocolTable.standard.registration(named: rawValue)?.key != ConnectionLevelProtocol.key
        }
    }

    public enum ConnectedOn: String, Sendable, Hashable, CaseIterable {
        /// The server's handshake event with a socket id.
        case handshake
        /// The upgrade response 101.
        case upgrade
        /// The server's handshake event, whose protocol gives no socket id (graphql-ws's
        /// `connection_ack`).
        case ack
    }

    public struct StateNames: Sendable, Hashable {
        public var initial: String
        public var connecting: String
        public var connected: String
        /// After the app closed on purpose.
        public var disconnected: String
        public var failed: String
        public init(initial: String, connecting: String, connected: String, disconnected: String, failed: String) {
            self.initial = initial
            self.connecting = connecting
            self.connected = connected
            self.disconnected = disconnected
            self.failed = failed
        }
    }

    public struct CloseBand: Sendable, Hashable {
        public var from: UInt16
        public var to: UInt16
        public var action: CloseAction
        /// For a `backoff` band: the window the next attempt's delay must fall in after such
        /// a close, in place of the schedule's (Phoenix waits 1-5 s after a 1012).
        public var delay: DelayWindow?
        public init(from: UInt16, to: UInt16, action: CloseAction, delay: DelayWindow? = nil) {
            self.from = from
            self.to = to
            self.action = action
            self.delay = delay
        }
        public func contains(_ code: UInt16) -> Bool { (from...to).contains(code) }
    }

    public struct BackoffSpec: Sendable, Hashable {
        /// Phases in order; a phase applies while the time since the interruption is below its `until`.
        public var phases: [BackoffPhase]
        /// Whether a successful connection resets the attempt counter.
        public var resetOnConnect: Bool
        /// With `resetOnConnect`: the reset happens only once a connection has stayed
        /// connected this long (counted at its drop); nil resets on every connect.
        public var resetAfterUptime: Micros?
        /// After this long without success the client must have given up (state `failed`).
        public var giveUpAfter: Micros?
        /// After this many attempts without success the client gives up (state `failed`).
        public var maxAttempts: Int?
        /// Where a reconnect's delay is counted from.
        public var delayFrom: DelayStart
        /// With `delayFrom: closed`: the longest the client waits for the close handshake
        /// before it gives up on it (and its delay starts anyway).
        public var closeTimeout: Micros?
        /// Floors that apply only after sessions shorter than a given uptime.
        public var shortSessions: ShortSessionFloors?
        public init(phases: [BackoffPhase], resetOnConnect: Bool, giveUpAfter: Micros?,
                    resetAfterUptime: Micros? = nil, maxAttempts: Int? = nil, delayFrom: DelayStart = .drop,
                    closeTimeout: Micros? = nil, shortSessions: ShortSessionFloors? = nil) {
            self.shortSessions = shortSessions
            self.phases = phases
            self.resetOnConnect = resetOnConnect
            self.giveUpAfter = giveUpAfter
            self.resetAfterUptime = resetAfterUptime
            self.maxAttempts = maxAttempts
            self.delayFrom = delayFrom
            self.closeTimeout = closeTimeout
        }
    }

    /// Where the wait before a reconnect starts.
    public enum DelayStart: String, Sendable, Hashable, CaseIterable {
        /// When the client learned of the end: the close frame sent or received, FIN/RST.
        case drop
        /// When the connection was over: the close handshake completed, the transport
        /// ended, or the spec's `closeTimeout` after the drop passed, whichever came first
        /// (a client that waits out its close timeout starts its delay only then).
        case closed
    }

    public struct BackoffPhase: Sendable, Hashable {
        public enum Kind: String, Sendable, Hashable, CaseIterable {
            /// base * factor^(n-1), capped.
            case exponential
            /// Every wait is the interval.
            case fixed
            /// Attempt n waits `steps[n-1]`; past the table, its last value.
            case stepped
        }
        /// How the client spreads its delay `d` of attempt n (see `window(attempt:previousDelay:)`).
        public enum Jitter: String, Sendable, Hashable, CaseIterable {
            /// Any delay in [0, d] (full jitter): only an upper bound is checked.
            case full
            /// The delay is d itself, within the timing tolerance.
            case none
            /// [d/2, d].
            case equal
            /// AWS's decorrelated jitter: [base, 3 * the previous delay], capped.
            case decorrelated
            /// [d - jitterSeconds, d + jitterSeconds].
            case additive
            /// [d * (1 - jitterFactor), d * (1 + jitterFactor)].
            case multiplicative
        }
        /// Whether the cap limits d before the jitter spreads it, or the spread delay.
        public enum CapApplied: String, Sendable, Hashable, CaseIterable {
            case beforeJitter, afterJitter
        }
        public var kind: Kind
        /// Exponential: first delay. Fixed: the interval.
        public var base: Micros
        public var factor: Double
        public var cap: Micros?
        public var jitter: Jitter
        /// Time since the interruption after which the next phase applies; nil = forever.
        public var until: Micros?
        /// The client's state while it waits in this phase.
        public var state: String
        /// The rule id reporting a delay that breaks this phase.
        public var rule: String
        /// Stepped: the delay of each attempt, in order (never empty for a stepped phase).
        public var steps: [Micros]
        /// Additive jitter: the spread on either side of d.
        public var jitterSeconds: Micros
        /// Multiplicative jitter: the spread on either side of d, as a fraction of d (0-1).
        public var jitterFactor: Double
        public var capApplied: CapApplied
        /// No delay of this phase is shorter (a lower bound that the jitter cannot undercut).
        public var floor: Micros?

        public init(kind: Kind, base: Micros, factor: Double, cap: Micros?, jitter: Jitter,
                    until: Micros?, state: String, rule: String, steps: [Micros] = [],
                    jitterSeconds: Micros = 0, jitterFactor: Double = 0, capApplied: CapApplied = .beforeJitter,
                    floor: Micros? = nil) {
            self.kind = kind
            self.base = base
            self.factor = factor
            self.cap = cap
            self.jitter = jitter
            self.until = until
            self.state = state
            self.rule = rule
            self.steps = steps
            self.jitterSeconds = jitterSeconds
            self.jitterFactor = jitterFactor
            self.capApplied = capApplied
            self.floor = floor
        }

        /// The bound (full jitter) or expected delay (no jitter) of attempt `n` (from 1): d
        /// with the cap applied.
        public func bound(attempt n: Int) -> Micros { nominal(attempt: n, capped: true) }

        /// d of attempt `n` (from 1), capped or not.
        public func nominal(attempt n: Int, capped: Bool) -> Micros {
            let raw: Double
            switch kind {
            case .fixed: raw = Double(base)
            case .stepped: raw = Double(steps.isEmpty ? base : steps[min(max(n, 1), steps.count) - 1])
            case .exponential: raw = Double(base) * pow(factor, Double(max(0, n - 1)))
            }
            let limited = capped ? cap.map { min(Double($0), raw) } ?? raw : raw
            return clampedMicros(limited)
        }
    }

    public struct StaleSpec: Sendable, Hashable {
        /// How the client finds out that a connection went dead.
        public var model: LivenessModel
        public var activityTimeout: Micros
        /// Whether the handshake's `activity_timeout` (ping after silence), or the open
        /// packet's ping interval and timeout (server pings), replace the defaults.
        public var handshakeOverrides: Bool
        /// Ping after silence: how long a ping may stay unanswered. Heartbeat: how long a
        /// heartbeat may wait for its reply. Server pings: how long after the expected
        /// ping the client waits before it gives the connection up. Server timeout: how long
        /// the client waits for any message from the server.
        public var pongTimeout: Micros
        /// Heartbeat: the client's heartbeat period. Server pings: the server's ping period.
        /// Server timeout: the client's keep-alive interval.
        public var interval: Micros
        /// Codes a stale close must use.
        public var closeBand: CloseBand
        public init(activityTimeout: Micros, handshakeOverrides: Bool, pongTimeout: Micros, closeBand: CloseBand,
                    model: LivenessModel = .pingAfterSilence, interval: Micros = 0) {
            self.model = model
            self.activityTimeout = activityTimeout
            self.handshakeOverrides = handshakeOverrides
            self.pongTimeout = pongTimeout
            self.interval = interval
            self.closeBand = closeBand
        }
    }

    /// The keep-alive scheme a client library uses, which decides what a missing ping, an
    /// unanswered one and a stale close are.
    public enum LivenessModel: String, Sendable, Hashable, CaseIterable {
        /// The client pings after `activityTimeout` of silence; any frame answers (Pusher, Bird).
        case pingAfterSilence
        /// The client sends a heartbeat every `interval` whatever the traffic, and the reply
        /// matched to it (by ref, when the protocol has refs) must come within `pongTimeout`
        /// (Phoenix: a heartbeat on topic `phoenix`).
        case heartbeat
        /// The server pings every `interval` and the client answers each; without a ping
        /// for `interval + pongTimeout` the client gives the connection up (engine.io, whose
        /// open packet carries `pingInterval` and `pingTimeout`).
        case serverPing
        /// Keep-alive and server timeout (SignalR's JavaScript and .NET clients): the client
        /// sends a message at least every `interval` (a ping when it had nothing else to
        /// send), and gives the connection up when no message came from the server for
        /// `pongTimeout` (the server timeout). Only data frames count, on both sides: a
        /// WebSocket ping or pong is the transport's, not the hub protocol's.
        case serverTimeout

        /// The rules that would judge this model by a pong it never promises: a spec
        /// listing one is refused rather than given false findings. Server timeout: the
        /// hub answers no ping (`server.pong-missing`), and a close before the timeout is
        /// the app's, not a premature stale one (`stale.premature-close`).
        public var inapplicableRules: [String] {
            self == .serverTimeout ? ["server.pong-missing", "stale.premature-close"] : []
        }
    }

    public struct ChannelSpec: Sendable, Hashable {
        /// Time after `connected` within which lost subscriptions and sign-in must be sent again.
        public var resubscribeWindow: Micros
        /// When a channel that crashed or timed out is joined again on the same connection.
        public var rejoin: RejoinSchedule?
        public init(resubscribeWindow: Micros, rejoin: RejoinSchedule? = nil) {
            self.resubscribeWindow = resubscribeWindow
            self.rejoin = rejoin
        }
    }

    public struct Tolerances: Sendable, Hashable {
        /// Slack on every measured delay.
        public var timing: Micros
        /// How soon "immediately" must be (retry after 4200-4299, closing after a bad handshake).
        public var immediate: Micros
        public init(timing: Micros, immediate: Micros) {
            self.timing = timing
            self.immediate = immediate
        }
    }

    /// What a close makes the client do.
    public func action(forClose code: UInt16?, closedBy: Side?) -> CloseAction {
        if let code, closedBy == .client, disconnectCodes.contains(code) { return .disconnect }
        if let code, let band = closeBands.first(where: { $0.contains(code) }) {
            // A refusal is the server's word; the client closing with such a code is not one.
            if band.action == .fail && closedBy != .server { return .backoff }
            return band.action
        }
        return .backoff
    }

    /// The backoff phase for a wait starting `elapsed` after the interruption.
    public func phase(at elapsed: Micros) -> BackoffPhase? {
        backoff.phases.first { $0.until.map { elapsed < $0 } ?? true } ?? backoff.phases.last
    }
}

/// A client's reaction to the end of a connection.
public enum CloseAction: String, Sendable, Hashable, CaseIterable {
    /// Refused: state `failed`, no retry.
    case fail
    /// Reconnect now, without backoff.
    case immediate
    /// Wait per the backoff schedule.
    case backoff
    /// The app closed on purpose; nothing is scheduled.
    case disconnect
}

/// The longest duration a spec, an option or a handshake can set, in seconds (about 31
/// years): spec files and options refuse more, a handshake's `activity_timeout` is
/// clamped to it. Far below `RecordTime.limit`, so deadlines cannot overflow.
public let maxDurationSeconds: Double = 1e9

/// Seconds (as written in specs and reports) to microseconds. Total: a value outside
/// ±`maxDurationSeconds` is clamped to it and NaN counts as 0, so no caller can trap here;
/// callers that take the value from input check the range first and say so.
public func micros(seconds: Double) -> Micros {
    guard !seconds.isNaN else { return 0 }
    let bounded = min(max(seconds, -maxDurationSeconds), maxDurationSeconds)
    return RecordTime.micros(seconds: bounded) ?? 0
}

/// A handshake's `activity_timeout` (seconds, as the server sent it) as the timeout in
/// force: nil for a negative value (meaningless: the spec's default stays), and a value
/// beyond `maxDurationSeconds` clamped to it (the server asked for no keep-alive checks
/// for longer than any capture lasts; 1e300 once trapped the conversion and, through
/// `--live`, the whole proxy).
public func handshakeActivityTimeout(seconds: Double) -> Micros? {
    guard seconds >= 0 else { return nil }
    return micros(seconds: seconds)
}

/// A computed duration as microseconds: NaN, negative or huge values (base 0 times a power
/// that overflowed to infinity) become 0 or the cap of all delays, never a trapping conversion.
func clampedMicros(_ value: Double) -> Micros {
    guard value.isFinite, value < 9e15 else { return value.isNaN || value > 0 ? 9_000_000_000_000_000 : 0 }
    return Micros(max(value, 0))
}

/// Microseconds as seconds with two decimals: "4.20 s".
public func formatSeconds(_ t: Micros) -> String {
    let hundredths = (Double(t) / 10_000).rounded()
    let value = hundredths / 100
    let whole = Int64(value)
    let frac = Int64(abs(hundredths)) % 100
    let sign = t < 0 && whole == 0 ? "-" : ""
    return "\(sign)\(whole).\(frac < 10 ? "0" : "")\(frac) s"
}

import Foundation
import Vocabulary
