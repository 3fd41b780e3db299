import Bird
import JSON
import Vocabulary
import WebSocket

/// The reference client: the connection lifecycle of the Bird Realtime guide (summarized in
/// docs/protocol.md and docs/rules.md), as a machine with no sockets and no clock. The runner
/// feeds it events with the time, and carries out the commands it returns.
///
/// - Six states; an open socket stays `connecting` until a handshake with `socket_id`.
/// - Full-jitter exponential backoff, reset by each successful handshake. The attempt number
///   n counts sockets opened since the last successful handshake, so the first attempt after
///   a drop from `connected` is n = 1, and a first connection that fails makes the next n = 2.
/// - Close codes: 4000-4099 -> `failed`, no retry; 4200-4299 -> reconnect at once; anything
///   else (and FIN, RST, failed connects) -> `unavailable`, then backoff.
/// - Stale check: after the activity timeout of silence, `P:ping`; no frame within the pong
///   timeout -> close 4201 and reconnect at once.
/// - Channels are kept across connections and re-subscribed with fresh signatures after every
///   `connected`; a sign-in is repeated too; client events are refused while unsubscribed.
///
/// `settings.bugs` switches on deliberate deviations (`SimBug`), one rule each.
public struct SimClient: Sendable {
    /// The backoff draw behind the last `unavailable`, for logs and tests.
    public struct BackoffDecision: Sendable, Hashable {
        public var attempt: Int
        public var bound: SimMicros
        public var delay: SimMicros
    }

    public let settings: SimClientSettings
    public internal(set) var state: SimConnectionState = .initialized
    /// The connection ID from the current connection's handshake.
    public internal(set) var socketID: String?
    /// Sockets opened since the last successful handshake.
    public internal(set) var attempt = 0
    /// Channels the app wants, in the order it asked for them; kept across connections.
    public internal(set) var channels: [String]
    /// Channels whose subscription succeeded on the current connection.
    public internal(set) var subscribed: Set<String> = []
    public internal(set) var lastBackoff: BackoffDecision?
    /// The activity timeout in force (the handshake's, once one arrived).
    public internal(set) var activityTimeout: SimMicros
    public internal(set) var signinUser: String?

    var random: SeededGenerator
    var socket: SimSocketID?
    var nextSocket: SimSocketID = 1
    var socketOpen = false
    /// A handshake was accepted on the current socket (with `ignore-missing-id`, one without an ID too).
    var handshakeDone = false
    var lastActivity: SimMicros = 0
    var pingSentAt: SimMicros?
    var deadlines: [SimClientTimer: SimMicros] = [:]
    var connectedCount = 0
    var signinSent = false
    /// The first signature sent for each channel (what `reuse-auth` re-sends).
    var firstAuth: [String: String] = [:]
    var earlySubscribed: Set<String> = []
    var triggersSent = 0
    var output: [SimClientCommand] = []

    public init(settings: SimClientSettings, random: SeededGenerator) {
        self.settings = settings
        self.random = random
        self.channels = settings.channels
        self.signinUser = settings.userID
        self.activityTimeout = settings.activityTimeout
    }

    public init(settings: SimClientSettings, seed: UInt64) {
        self.init(settings: settings, random: SeededGenerator(seed: seed))
    }

    func has(_ bug: SimBug) -> Bool { settings.bugs.contains(bug) }

    /// Handles one event at time `now` and returns what the runner must do, in order.
    public mutating func handle(_ event: SimClientEvent, now: SimMicros) -> [SimClientCommand] {
        switch event {
        case .connect: connect(now)
        case .disconnect: disconnect()
        case .subscribe(let channel): subscribe(channel)
        case .unsubscribe(let channel): unsubscribe(channel)
        case .signin(let user): signin(user)
        case .trigger(let channel, let name): trigger(channel, event: name)
        case .socketOpened(let id): opened(id, now)
        case .received(let id, let frame): received(frame, on: id, now)
        case .socketClosed(let id, let end): if id == socket { ended(end, now) }
        case .timer(let timer): fired(timer, now)
        }
        defer { output = [] }
        return output
    }

    // MARK: - App commands

    mutating func connect(_ now: SimMicros) {
        guard [.initialized, .disconnected, .failed].contains(state) else { return }
        attempt = 0  // a new story: `connect()` after `disconnect()` or a refusal
        openSocket(now, why: state == .initialized ? "connect()" : "connect() after \(state.rawValue)")
    }

    mutating func disconnect() {
        cancel(.reconnect)
        if let old = socket {
            emit(.close(old, code: 1000, reason: "disconnect()"))
            clearConnection()
        }
        transition(to: .disconnected, "disconnect()")
    }

    // MARK: - Socket

    mutating func openSocket(_ now: SimMicros, why: String) {
        attempt += 1
        let id = nextSocket
        nextSocket += 1
        socket = id
        transition(to: .connecting, "attempt \(attempt), \(why)")
        emit(.openSocket(id))
        schedule(.handshake, at: now + settings.handshakeTimeout)
        if has(.earlySubscribe) {
            // Pipelined behind the upgrade request: on the wire before any handshake can be.
            for channel in channels where BirdChannelKind(channel: channel) == .public {
                emit(.send(id, BirdMessage(event: settings.event("subscribe"), data: ["channel": .string(channel)]).frame))
                earlySubscribed.insert(channel)
            }
        }
    }

    mutating func opened(_ id: SimSocketID, _ now: SimMicros) {
        guard id == socket, !socketOpen else { return }
        socketOpen = true
        lastActivity = now
    }

    mutating func received(_ frame: Frame, on id: SimSocketID, _ now: SimMicros) {
        guard id == socket else { return }
        lastActivity = now
        if pingSentAt != nil {
            // Any frame answers a ping.
            pingSentAt = nil
            if !has(.prematureStaleClose) { cancel(.pong) }
            if handshakeDone { schedule(.activity, at: now + activityTimeout) }
        }
        switch frame.opcode {
        case .ping:
            emit(.send(id, Frame(opcode: .pong, payload: frame.payload)))
        case .close:
            ended(.closeFrame(code: closeCode(of: frame.payload),
                              reason: String(decoding: frame.payload.dropFirst(2), as: UTF8.self)), now)
        case .text:
            if let message = BirdMessage.parse(frame) { handle(message, on: id, now) }
        default:
            break
        }
    }

    mutating func handle(_ message: BirdMessage, on id: SimSocketID, _ now: SimMicros) {
        switch message.event {
        case settings.event("connection_established"):
            handshake(message.decodedData, now)
        case settings.event("ping"):
            emit(.send(id, BirdMessage(event: settings.event("pong")).frame))
        case settings.event("pong"):
            break
        case settings.event("error"):
            let data = message.decodedData
            let code = data["code"]?.intValue.map { " \($0)" } ?? ""
            emit(.log("error\(code): \(data["message"]?.stringValue ?? "(no message)")"))
        case settings.internalEvent("subscription_succeeded"):
            guard let channel = message.channel, channels.contains(channel) else { return }
            subscribed.insert(channel)
            emit(.log("subscribed \(channel)"))
            if BirdChannelKind(channel: channel).needsAuth { trigger(channel, event: "client-hello") }
        case settings.event("subscription_error"):
            let data = message.decodedData
            emit(.log("subscription_error on \(message.channel ?? "?"): \(data["error"]?.stringValue ?? "refused")"))
        case settings.event("signin_success"):
            emit(.log("signed in as \(signinUser ?? "?")"))
        default:
            emit(.delivered(message))
        }
    }

    mutating func handshake(_ data: JSONValue, _ now: SimMicros) {
        guard state == .connecting, !handshakeDone, let socket else { return }
        cancel(.handshake)
        activityTimeout = settings.activityTimeout
        if settings.useHandshakeActivityTimeout, let seconds = data["activity_timeout"]?.doubleValue, seconds > 0 {
            activityTimeout = SimDuration.seconds(seconds)
        }
        guard let id = data["socket_id"]?.stringValue, !id.isEmpty else {
            emit(.log("error: handshake without socket_id"))
            if has(.ignoreMissingID) {
                handshakeDone = true
                transition(to: .connected, "no socket id, kept open")
                startConnection(now)
            } else {
                emit(.close(socket, code: 1002, reason: "handshake without socket_id"))
                clearConnection()
                backOff(now, why: "handshake without socket_id")
            }
            return
        }
        socketID = id
        handshakeDone = true
        connectedCount += 1
        if !has(.noBackoffReset) { attempt = 0 }
        transition(to: .connected, "socket \(id)")
        startConnection(now)
    }

    /// The current socket ended; the close code (or its absence) decides what comes next.
    mutating func ended(_ end: SimSocketEnd, _ now: SimMicros) {
        guard let old = socket else { return }
        clearConnection()
        switch end {
        case .closeFrame(let code, let reason):
            // Answer the server's close (RFC 6455 5.5.1), then decide.
            let echo = code.flatMap { CloseCode($0).isSendable ? $0 : nil } ?? 1000
            emit(.close(old, code: echo, reason: ""))
            let why = "closed \(code.map(String.init) ?? "without code")" + (reason.isEmpty ? "" : " \"\(reason)\"")
            switch code ?? 0 {
            case 4000...4099 where !has(.retryAfterRefused):
                cancel(.reconnect)
                transition(to: .failed, "\(why): refused, no retry")
            case 4200...4299:
                reconnectNow(now, why: why)
            default:
                backOff(now, why: why)
            }
        case .fin: backOff(now, why: "connection ended without a close frame (FIN)")
        case .reset: backOff(now, why: "connection reset (RST)")
        case .failed(let reason): backOff(now, why: reason)
        }
    }

    mutating func reconnectNow(_ now: SimMicros, why: String) {
        if has(.slowImmediateRetry) {
            let delay = settings.slowRetryDelay
            schedule(.reconnect, at: now + delay)
            transition(to: .unavailable, "\(why); retry in \(SimDuration.format(delay))")
        } else {
            openSocket(now, why: "\(why): reconnecting at once")
        }
    }

    mutating func backOff(_ now: SimMicros, why: String) {
        let n = attempt + 1
        let bound = settings.backoff.bound(attempt: n)
        var delay = settings.backoff.delay(attempt: n, using: &random)
        if has(.noJitter) { delay = bound }
        if has(.exceedBackoff) { delay += settings.backoff.cap + SimDuration.second }
        lastBackoff = BackoffDecision(attempt: n, bound: bound, delay: delay)
        schedule(.reconnect, at: now + delay)
        transition(to: .unavailable, "\(why); retry in \(SimDuration.format(delay)) (attempt \(n), bound \(SimDuration.format(bound)))")
    }

    mutating func clearConnection() {
        socket = nil
        socketOpen = false
        handshakeDone = false
        socketID = nil
        pingSentAt = nil
        subscribed = []
        earlySubscribed = []
        for timer in [SimClientTimer.handshake, .activity, .pong, .trigger] { cancel(timer) }
    }

    // MARK: - Output

    mutating func schedule(_ timer: SimClientTimer, at time: SimMicros) {
        deadlines[timer] = time
        emit(.schedule(timer, at: time))
    }

    mutating func cancel(_ timer: SimClientTimer) {
        guard deadlines.removeValue(forKey: timer) != nil else { return }
        emit(.cancel(timer))
    }

    mutating func transition(to next: SimConnectionState, _ detail: String) {
        let previous = state
        state = next
        emit(.stateChanged(from: previous, to: next, detail: detail))
    }

    mutating func emit(_ command: SimClientCommand) { output.append(command) }
}
