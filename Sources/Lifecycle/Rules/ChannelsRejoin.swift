import Capture
import Protocols
import Vocabulary

/// `channels.rejoin`: on a connection that stays up, a channel that crashed (the server's
/// error event on it: Phoenix's `phx_error`), whose join went unanswered for the spec's
/// `joinTimeout`, or (with `afterRefusal`) whose join the server refused, is joined again
/// within the window of the spec's rejoin schedule (`channels.rejoin`): not before its
/// lower end - tolerance (found when the join comes), and not after its upper end +
/// tolerance (found when that time passes without one). Rejoins are counted per channel
/// from its last successful join. The connection's end hands the channel to the socket's
/// own rejoin (`channels.resubscribe`); a leave or the server's close of the channel owes
/// nothing. When the input ends inside a window the check is undetermined, not passed.
///
/// Not judged: an error while the channel's join is still pending (phoenix.js rejoins,
/// phoenix-channels-python-client ignores it), and a second error before the rejoin (the
/// wait is timed from the first).
public struct ChannelsRejoin: LifecycleRule {
    public static let id = "channels.rejoin"
    public static let severity = Severity.error
    public static let summary = "a channel that crashed or timed out on a live connection is joined again within its rejoin schedule's window"
    public static let observes: StepKinds = [.attempt, .drop, .clientFrame, .serverProtocolFrame]
    public static let hasTimers = true
    /// How many channels of one connection are followed; more are counted and reported
    /// as not checked.
    public static let channelLimit = 256

    /// A rejoin the schedule promises: why, when the wait began, which rejoin it is.
    struct Wait: Sendable, Hashable {
        var cause: String
        var since: Micros
        var number: Int
        var window: DelayWindow
        var evidence: Evidence
        /// The wait began when the join timed out.
        var afterTimeout = false
    }

    /// What the rule knows of one channel on the watched connection.
    struct Channel: Sendable, Hashable {
        /// The join's reply was `ok` and nothing ended the channel since.
        var joined = false
        /// A join sent and not answered yet: when, for the join timeout.
        var joinSentAt: Micros?
        var joinEvidence: Evidence?
        /// Rejoins since the last successful join.
        var rejoins = 0
        var wait: Wait?
    }

    let spec: LifecycleSpec
    var conn: ConnectionID?
    var channels: [String: Channel] = [:]
    /// Channels of the watched connection not followed (past `channelLimit`).
    var untracked = 0
    public init(spec: LifecycleSpec) { self.spec = spec }

    public mutating func observe(_ step: TimelineStep, _ context: RuleContext) -> [Finding] {
        guard let rejoin = spec.channels.rejoin else { return [] }
        switch step {
        case .attempt(let attempt):
            conn = attempt.conn
            channels.removeAll()
        case .drop(let drop):
            if drop.conn == conn { channels.removeAll() }
        case .frame:
            // A server message a fault swallowed never reached the client. The facts first
            // (`FrameFacts`): the record and event are bound only for the kinds wanted.
            guard let facts = step.frameFacts, let kind = facts.kind, facts.conn == conn,
                  facts.from == .client || facts.action != .dropped else { return [] }
            let client = facts.from == .client
            let wanted = client ? kind == .subscribe || kind == .unsubscribe
                : kind == .subscriptionSucceeded || kind == .subscriptionError || kind == .error || kind == .unsubscribe
            guard wanted, case .frame(let frame, let event?) = step, let name = event.targetChannel else { return [] }
            if channels[name] == nil {
                guard kind == .subscribe else { return [] }
                guard channels.count < Self.channelLimit else {
                    untracked += 1
                    return []
                }
                channels[name] = Channel()
            }
            return update(name, kind: kind, fromClient: client, frame: frame, event: event.name, rejoin, context)
        default:
            break
        }
        return []
    }

    private mutating func update(_ name: String, kind: RealtimeEventKind, fromClient: Bool, frame: FrameRecord,
                                 event: String, _ rejoin: LifecycleSpec.RejoinSchedule, _ context: RuleContext) -> [Finding] {
        guard var channel = channels[name] else { return [] }
        // Written back when the switch is done, unless the channel owes nothing any more.
        var ended = false
        defer { channels[name] = ended ? nil : channel }
        let made = frame.action == .injected ? " (injected)" : ""
        let evidence = Evidence(conn: frame.conn, t: frame.t, from: frame.from, summary: "\(event) \(name)\(made)")
        var found: [Finding] = []
        switch (fromClient, kind) {
        case (true, .subscribe):
            if let wait = channel.wait {
                let delay = frame.t.subtractingSaturated(wait.since)
                let tolerance = spec.tolerances.timing
                if delay < wait.window.lower.subtractingSaturated(tolerance) {
                    found.append(finding(context, conn: frame.conn, t: frame.t,
                                         "rejoin of \(name) \(formatSeconds(delay)) after \(wait.cause) < lower bound \(formatSeconds(wait.window.lower)) for rejoin \(wait.number) (tolerance \(formatSeconds(tolerance)))",
                                         evidence: [wait.evidence, evidence]))
                }
                channel.wait = nil
            }
            channel.joinSentAt = frame.t
            channel.joinEvidence = evidence
        case (true, .unsubscribe) where leavesTimedOutJoin(&channel, at: frame.t, rejoin):
            // phoenix.js leaves a join that timed out, then rejoins on its schedule.
            break
        case (_, .unsubscribe):
            // Left on purpose, or closed by the server: nothing is owed.
            ended = true
        case (false, .subscriptionSucceeded):
            // A reply that comes after its join timed out does not cancel the rejoin.
            guard channel.wait == nil else { return [] }
            channel = Channel(joined: true)
        case (false, .subscriptionError):
            guard channel.wait == nil else { return [] }
            channel.joinSentAt = nil
            if rejoin.afterRefusal {
                channel.wait = wait(&channel, cause: "join refused", since: frame.t, evidence: evidence, rejoin)
            } else {
                ended = true
            }
        case (false, .error):
            guard channel.joined, channel.wait == nil else { return [] }
            channel.joined = false
            channel.wait = wait(&channel, cause: event, since: frame.t, evidence: evidence, rejoin)
        default:
            break
        }
        return found
    }

    /// Whether a leave at `t` is the client leaving its join that timed out (within the
    /// tolerance of the timeout), which keeps, or starts, the wait for the rejoin.
    private func leavesTimedOutJoin(_ channel: inout Channel, at t: Micros, _ rejoin: LifecycleSpec.RejoinSchedule) -> Bool {
        let tolerance = spec.tolerances.timing
        func near(_ mark: Micros) -> Bool { t >= mark.subtractingSaturated(tolerance) && t <= mark.addingSaturated(tolerance) }
        if let wait = channel.wait { return wait.afterTimeout && near(wait.since) }
        guard let timeout = rejoin.joinTimeout, let sent = channel.joinSentAt, let evidence = channel.joinEvidence else { return false }
        let timedOut = sent.addingSaturated(timeout)
        guard near(timedOut) else { return false }
        channel.joinSentAt = nil
        channel.wait = timeoutWait(&channel, at: timedOut, timeout: timeout, evidence: evidence, rejoin)
        return true
    }

    private func timeoutWait(_ channel: inout Channel, at t: Micros, timeout: Micros, evidence: Evidence,
                             _ rejoin: LifecycleSpec.RejoinSchedule) -> Wait {
        var next = wait(&channel, cause: "join timeout (\(formatSeconds(timeout)))", since: t, evidence: evidence, rejoin)
        next.afterTimeout = true
        return next
    }

    /// The next rejoin's wait of `channel`, counted.
    private func wait(_ channel: inout Channel, cause: String, since: Micros, evidence: Evidence,
                      _ rejoin: LifecycleSpec.RejoinSchedule) -> Wait {
        channel.rejoins += 1
        return Wait(cause: cause, since: since, number: channel.rejoins,
                    window: rejoin.schedule.window(attempt: channel.rejoins, previousDelay: nil), evidence: evidence)
    }

    /// When the wait's window, widened by the tolerance, closes.
    private func deadline(_ wait: Wait) -> Micros { wait.since.addingSaturated(wait.window.upper).addingSaturated(spec.tolerances.timing) }

    public func quietUntil(_ context: RuleContext) -> Micros {
        var quiet = Micros.max
        for channel in channels.values {
            if let wait = channel.wait { quiet = min(quiet, deadline(wait)) }
            if let sent = channel.joinSentAt, let timeout = spec.channels.rejoin?.joinTimeout {
                quiet = min(quiet, sent.addingSaturated(timeout))
            }
        }
        return quiet
    }

    public mutating func advance(to now: Micros, _ context: RuleContext) -> [Finding] {
        guard let rejoin = spec.channels.rejoin, !channels.isEmpty else { return [] }
        var found: [Finding] = []
        for name in channels.keys.sorted() {
            guard var channel = channels[name] else { continue }
            if channel.wait == nil, let sent = channel.joinSentAt, let timeout = rejoin.joinTimeout,
               now > sent.addingSaturated(timeout), let joinEvidence = channel.joinEvidence {
                channel.joinSentAt = nil
                channel.wait = timeoutWait(&channel, at: sent.addingSaturated(timeout), timeout: timeout, evidence: joinEvidence, rejoin)
            }
            if let wait = channel.wait, now > deadline(wait), let conn {
                channel.wait = nil
                found.append(finding(context, conn: conn, t: deadline(wait),
                                     "no rejoin of \(name) within \(formatSeconds(deadline(wait) - wait.since)) of \(wait.cause) (rejoin \(wait.number): bound \(formatSeconds(wait.window.upper)) + tolerance \(formatSeconds(spec.tolerances.timing)))",
                                     evidence: [wait.evidence]))
            }
            channels[name] = channel
        }
        return found
    }

    public func undetermined(at now: Micros, _ context: RuleContext) -> [Undetermined] {
        guard let conn else { return [] }
        var open: [Undetermined] = []
        for name in channels.keys.sorted() {
            guard let wait = channels[name]?.wait else { continue }
            open.append(undetermined(context, conn: conn, t: wait.since, deadline: deadline(wait),
                                     "rejoin of \(name) after \(wait.cause) not seen yet; the capture ended at \(formatSeconds(now)), before the window closed at \(formatSeconds(deadline(wait)))"))
        }
        if untracked > 0 {
            open.append(undetermined(context, conn: conn, t: now, deadline: now,
                                     "\(untracked) joins of channels past the first \(Self.channelLimit) of a connection not followed"))
        }
        return open
    }
}
