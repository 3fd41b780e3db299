import Capture
import Protocols
import Vocabulary
import WebSocket

/// One client's state machine: turns its connections' records into timeline steps,
/// transitions and rule findings. Keeps only this client's state.
///
/// Every record handler appends what it found to the caller's `events` (one buffer the
/// caller reuses, so a record that finds nothing allocates nothing), and the rules read
/// one `RuleContext` that the timeline keeps and changes in place: the views of its
/// connections live inside it, so a record touches its view where it lies.
struct ClientTimeline {
    let info: ClientInfo
    /// What the rules read: spec, state, the connections' views.
    private var ctx: RuleContext
    var spec: LifecycleSpec { ctx.spec }
    /// The client's state by name.
    var state: String { ctx.state }
    private var rules: [any LifecycleRule]
    /// Which rules have timers and which observe each kind of step: shared by every
    /// client of the spec (`RulePlan`).
    private var plan: RulePlan
    /// The connection-level spec this client switches to when it turns out to speak no
    /// event protocol (`switchToConnectionLevel`); nil when the spec is connection-level.
    private let fallback: LifecycleSpec?
    private let fallbackPlan: RulePlan?
    /// Whether the client's protocol is settled: an event of the spec's protocol was seen,
    /// or a data frame without one.
    private var protocolDecided = false
    /// The client showed none of the spec's protocol and is analyzed at connection level.
    private(set) var connectionLevel = false
    /// Whether `observers` and `timersQuietUntil` may skip work (false only in tests that
    /// check skipping changes nothing).
    private let shortcuts: Bool
    /// Up to this record time no timer rule can find anything (the minimum of their
    /// `quietUntil`), unless something besides a plain receipt happens to the client
    /// first; every record handler resets it to `Micros.min` ("ask") except for those.
    private var timersQuietUntil = Micros.min
    /// Connection order, newest last; views of old connections are dropped beyond a few.
    private var order: [ConnectionID] = []
    /// The bars of the connections not ended yet, in order of opening: a handful at most
    /// for a client, so a short array (a dictionary of one entry cost about 250 bytes).
    private var summaries: [ConnectionLifespan] = []
    /// The fault that ended the previous connection, per new connection.
    private var causeFault: [ConnectionID: String] = [:]
    /// The latest drop of the newest connection, boxed: a `Drop` is some 200 bytes, most
    /// clients are between drops, and the timeline is kept per client.
    private var lastDropBox: Box<Drop>?
    private var lastDrop: Drop? {
        get { lastDropBox?.value }
        set { lastDropBox = newValue.map(Box.init) }
    }
    private var attempts = 0
    private var attemptsWithoutReset = 0
    /// The delay of the latest attempt since the counter's reset (decorrelated jitter).
    private var lastDelay: Micros?
    private var interruptedAt: Micros?
    /// The client's recent short sessions, for `backoff.shortSessions` floors.
    private var shortSessions = ShortSessionCount()
    // Which connection the client holds and when it was last active (client grouping)
    // are the router's to know (`ClientRouter`), not the timeline's.

    /// `shortcuts: false` hands every step to every rule and asks every timer rule on every
    /// record, as before `observes` and `quietUntil` existed: tests compare both ways
    /// (the plans must be made with the same setting).
    init(info: ClientInfo, spec: LifecycleSpec, plan: RulePlan, appSecret: String?, shortcuts: Bool = true,
         fallback: LifecycleSpec? = nil, fallbackPlan: RulePlan? = nil) {
        self.info = info
        self.ctx = RuleContext(spec: spec, client: info.id, appSecret: appSecret, connections: ConnectionViews(),
                               current: nil, stateID: plan.states.initial, states: plan.states.table)
        self.fallback = spec.events.decodesEvents ? fallback : nil
        self.fallbackPlan = spec.events.decodesEvents ? fallbackPlan : nil
        self.plan = plan
        self.rules = plan.makeRules()
        self.shortcuts = shortcuts
    }

    /// Settles whether the client speaks the spec's event protocol, from a frame of a
    /// connection that got its 101: an event of the protocol says yes; a data frame without
    /// one says no, and the client is analyzed at connection level from then on (the spec's
    /// protocol rules would only invent errors about a client that never spoke it, such as
    /// keeping it `connecting` forever for want of a handshake).
    private mutating func settleProtocol(_ record: FrameRecord, event: RealtimeEvent?, into events: inout [AnalysisEvent]) {
        guard !protocolDecided, let fallback, let fallbackPlan else { return }
        if event != nil {
            protocolDecided = true
            return
        }
        guard record.opcode == .text || record.opcode == .binary, record.action != .injected,
              let v = ctx.connections.index(of: record.conn), let upgradedAt = ctx.connections[at: v].upgradedAt else { return }
        protocolDecided = true
        connectionLevel = true
        ctx.spec = fallback
        plan = fallbackPlan
        rules = fallbackPlan.makeRules()
        timersQuietUntil = Micros.min
        guard ctx.connections[at: v].connectedAt == nil, ctx.connections[at: v].droppedAt == nil else { return }
        ctx.connections[at: v].connectedAt = upgradedAt
        let evidence = Evidence(conn: record.conn, t: upgradedAt, from: .server, summary: "upgrade response 101")
        connected(conn: record.conn, t: upgradedAt, cause: "upgrade 101 (no protocol events: connection level)",
                  evidence: evidence, into: &events)
    }

    /// The first event of the client: its `initialized` state.
    func start(into events: inout [AnalysisEvent]) {
        events.append(.transition(Transition(client: info.id, conn: nil, t: info.firstSeen, from: nil, to: state,
                                             cause: "first observation", evidence: nil)))
    }

    // MARK: records

    mutating func open(_ record: OpenRecord, into events: inout [AnalysisEvent]) {
        advance(to: record.t, into: &events)
        timersQuietUntil = Micros.min
        let fromState = state
        let evidence = Evidence(conn: record.conn, t: record.t, from: .client, summary: "tcp open from \(record.client)")
        var delay: Micros?
        var previousDelay: Micros?
        if let drop = lastDrop, drop.action != .disconnect {
            attempts += 1
            attemptsWithoutReset += 1
            delay = record.t - delayStart(after: drop, openedAt: record.t)
            previousDelay = lastDelay
            lastDelay = delay
            if let fault = drop.fault { causeFault[record.conn] = fault }
        } else {
            // A first connect, or connect() after disconnect(): not a scheduled retry.
            attempts = 0
            attemptsWithoutReset = 0
            lastDelay = nil
            shortSessions.reset()
        }
        var view = ConnectionView(conn: record.conn, openedAt: record.t,
                                  activityTimeout: spec.stale?.activityTimeout ?? 0)
        view.lastReceivedAt = record.t
        view.serverPingInterval = spec.stale?.interval ?? 0
        view.serverPingTimeout = spec.stale?.pongTimeout ?? 0
        ctx.connections.set(view)
        order.append(record.conn)
        pruneViews()
        ctx.current = order.last
        let summary = ConnectionLifespan(conn: record.conn, client: info.id, openedAt: record.t)
        if let i = summaryIndex(record.conn) { summaries[i] = summary } else { summaries.append(summary) }
        var cause = "tcp open"
        if spec.reportDelays, let delay, let drop = lastDrop {
            cause += ": retry \(attempts), \(formatSeconds(delay)) after \(drop.cause)"
        }
        setState(plan.states.connecting, conn: record.conn, t: record.t, cause: cause, evidence: evidence, into: &events)
        let attempt = Attempt(conn: record.conn, t: record.t, number: attempts, numberWithoutReset: attemptsWithoutReset,
                              fromState: fromState, previousDrop: lastDrop, delay: delay, previousDelay: previousDelay,
                              interruptedAt: interruptedAt, evidence: evidence)
        run(.attempt(attempt), into: &events)
    }

    mutating func upgrade(_ record: UpgradeRecord, into events: inout [AnalysisEvent]) {
        advance(to: record.t, into: &events)
        timersQuietUntil = Micros.min
        guard record.from == .server, let v = ctx.connections.index(of: record.conn) else { return }
        run(.upgradeResponse(conn: record.conn, t: record.t, status: record.status), into: &events)
        let status = record.status ?? 0
        let evidence = Evidence(conn: record.conn, t: record.t, from: .server, summary: "upgrade response \(status)")
        if status == 101 {
            ctx.connections[at: v].upgradedAt = record.t
            if spec.connectedOn == .upgrade {
                ctx.connections[at: v].connectedAt = record.t
                connected(conn: record.conn, t: record.t, cause: "upgrade 101", evidence: evidence, into: &events)
            }
        } else if ctx.connections[at: v].droppedAt == nil {
            let action: CloseAction = spec.refusalStatuses.contains(status) ? .fail : .backoff
            drop(conn: record.conn, t: record.t, code: nil, by: .server, action: action,
                 cause: "upgrade refused \(status)", evidence: evidence, fault: nil, into: &events)
        }
    }

    /// The record and event are taken: the step for the rules that observe frames is made
    /// of them, moved in (built from borrowed ones it copied both, a retain of each of their
    /// references, on three frames in four of a Bird capture).
    mutating func frame(_ record: consuming FrameRecord, event: consuming RealtimeEvent?, into events: inout [AnalysisEvent]) {
        advance(to: record.t, into: &events)
        if !isPlainReceipt(record, event: event) { timersQuietUntil = Micros.min }
        if !protocolDecided, fallback != nil { settleProtocol(record, event: event, into: &events) }
        guard let v = ctx.connections.index(of: record.conn) else { return }
        if let fault = record.fault { ctx.connections[at: v].lastFault = fault }
        // Evidence is built only when a view or step keeps it (`Self.evidence`): most frames
        // are plain receipts, for which the summary string would be made and thrown away.
        // (Not a local closure: capturing the record and event, it kept them from being
        // moved into the observers' step below.)
        let isPong = record.opcode == .pong || event?.kind == .pong
        if record.from == .server {
            // A frame a fault swallowed never reached the client.
            if record.action == .dropped {
                let view = ctx.connections[at: v]
                if view.lastPing.isPresent, view.pongSincePing.isAbsent, view.swallowedPongFault.isAbsent, isPong {
                    ctx.connections[at: v].swallowedPongFault = record.fault
                }
                return
            }
            ctx.connections[at: v].lastReceivedAt = record.t
            if !record.opcode.isControl { ctx.connections[at: v].lastMessageReceivedAt = record.t }
            if ctx.connections[at: v].lastPing.isPresent {
                if ctx.connections[at: v].receivedSincePing.isAbsent { ctx.connections[at: v].receivedSincePing = Self.evidence(record, event) }
                let pingRef = ctx.connections[at: v].lastPingRef
                if ctx.connections[at: v].pongSincePing.isAbsent, isPong,
                   pingRef.isAbsent || (event?.ref).isAbsent || event?.ref == pingRef {
                    ctx.connections[at: v].pongSincePing = Self.evidence(record, event)
                }
            }
            // Read through the optional where it lies: `if let event` here copied the event
            // (every reference in it retained, then released) on every server frame.
            if event.isPresent {
                Self.noteServerLiveness(event, of: record, stale: spec.stale, in: &ctx.connections[at: v])
                if let ending = event?.ending, spec.honoursServerEndings {
                    ctx.connections[at: v].ending = ending
                    ctx.connections[at: v].endingFrom = .server
                }
            }
            if event?.kind == .connectionEstablished, let event {
                handshake(record, event, at: v, into: &events)
                return
            }
            if record.opcode == .close, ctx.connections[at: v].serverClose.isAbsent {
                ctx.connections[at: v].serverClose = Self.evidence(record, event)
            }
        } else {
            if !record.opcode.isControl { ctx.connections[at: v].lastMessageSentAt = record.t }
            if record.opcode == .ping || event?.kind == .ping {
                ctx.connections[at: v].lastPing = Self.evidence(record, event)
                ctx.connections[at: v].receivedSincePing = nil
                ctx.connections[at: v].pongSincePing = nil
                ctx.connections[at: v].swallowedPongFault = nil
                ctx.connections[at: v].lastPingRef = event?.ref
            }
            if isPong, ctx.connections[at: v].lastServerPing.isPresent, ctx.connections[at: v].pongToServerPing.isAbsent {
                ctx.connections[at: v].pongToServerPing = Self.evidence(record, event)
            }
            // The client's own message ending the session (engine.io's close packet): it
            // decides the drop after it, whoever's close frame comes first.
            if let ending = event?.ending, spec.honoursServerEndings, ctx.connections[at: v].ending.isAbsent {
                ctx.connections[at: v].ending = ending
                ctx.connections[at: v].endingFrom = .client
            }
            if record.opcode == .close, ctx.connections[at: v].clientClose.isAbsent {
                ctx.connections[at: v].clientClose = Self.evidence(record, event)
                ctx.connections[at: v].clientCloseCode = record.closeCode
            }
        }
        let droppedBefore = ctx.connections[at: v].droppedAt != nil
        // The step only for the rules that observe it (most frames, server application
        // events, have no observer): the record and event move into it, but for a close
        // frame, which `closeFrame` reads after, so its step holds copies.
        let kind = StepKinds.frame(record, event)
        let observed = !plan.observers[kind.rawValue.trailingZeroBitCount].isEmpty
        if record.opcode == .close {
            if observed { run(.frame(copy record, copy event), kind: kind, into: &events) }
            closeFrame(record, droppedBefore: droppedBefore, evidence: Self.evidence(record, event), into: &events)
        } else if observed {
            run(.frame(consume record, consume event), kind: kind, into: &events)
        }
    }

    /// The server's handshake (`connection_established`) on the connection at `v`.
    private mutating func handshake(_ record: FrameRecord, _ event: RealtimeEvent, at v: Int,
                                    into events: inout [AnalysisEvent]) {
        // Each read of `socketID` or `activityTimeout` finds the member in the event's data
        // again (for Pusher's double-encoded data: a parse of the string, a new array and
        // a new string): read five times, they were a fifth of the engine's allocations on
        // the synthetic capture (0.32 of its 1.6 per record).
        let (socketID, activityTimeout) = event.handshakeFields
        let evidence = Self.evidence(record, event)
        ctx.connections[at: v].handshakeAt = record.t
        ctx.connections[at: v].socketID = socketID
        ctx.connections[at: v].handshakeMissingID = socketID == nil
        if let stale = spec.stale {
            ctx.connections[at: v].activityTimeout = stale.handshakeOverrides
                ? activityTimeout.flatMap(handshakeActivityTimeout(seconds:)) ?? stale.activityTimeout : stale.activityTimeout
        }
        run(.handshake(Handshake(conn: record.conn, t: record.t, socketID: socketID,
                                 activityTimeout: activityTimeout, evidence: evidence,
                                 rewrittenBy: record.action == .injected ? record.fault : nil)), into: &events)
        let connects = spec.connectedOn == .ack || (socketID != nil && spec.connectedOn == .handshake)
        if connects, ctx.connections[at: v].droppedAt == nil {
            ctx.connections[at: v].connectedAt = record.t
            let cause = spec.connectedOn == .ack ? "handshake \(event.name)" : "handshake socket_id \(socketID ?? "")"
            connected(conn: record.conn, t: record.t, cause: cause, evidence: evidence, into: &events)
        }
    }

    /// A close frame from either side: the first end of the connection the client learns of
    /// decides its next state; the second close completes the handshake.
    private mutating func closeFrame(_ record: FrameRecord, droppedBefore: Bool, evidence: Evidence,
                                     into events: inout [AnalysisEvent]) {
        if !droppedBefore {
            let code = record.closeCode
            let stale = record.from == .client && isStale(record.conn, at: record.t)
            var action = spec.action(forClose: code, closedBy: record.from)
            // The client gave up a dead connection: a stale close whatever its code, never
            // the app's disconnect(), so the retry after it is checked.
            if stale, action == .disconnect { action = .backoff }
            drop(conn: record.conn, t: record.t, code: code, by: record.from, action: action,
                 cause: "close \(code.map(String.init) ?? "(no code)") from \(record.from.rawValue)", evidence: evidence,
                 fault: record.fault ?? (record.action == .injected ? "injected close" : nil), stale: stale, into: &events)
        }
        if let view = ctx.connections[record.conn], view.clientClose != nil, view.serverClose != nil {
            noteClosed(record.conn, at: record.t)
        }
        closeHandshakeCompleted(record.conn, at: record.t, into: &events)
    }

    /// Whether the spec's liveness model counts the connection dead at `t` (`StaleSpec.missed`).
    private func isStale(_ conn: ConnectionID, at t: Micros) -> Bool {
        guard let stale = spec.stale, let view = ctx.connections[conn] else { return false }
        return stale.missed(view, at: t, tolerance: spec.tolerances.timing) != nil
    }

    /// The liveness facts a server event carries: a server ping (server-driven models) and
    /// the ping schedule the server announces, which replaces the spec's when it may.
    private static func noteServerLiveness(_ event: RealtimeEvent?, of record: FrameRecord, stale: LifecycleSpec.StaleSpec?,
                                           in view: inout ConnectionView) {
        if event?.kind == .ping {
            view.lastServerPing = evidence(record, event)
            view.pongToServerPing = nil
        }
        if let announced = event?.liveness, let stale, stale.model == .serverPing, stale.handshakeOverrides {
            view.serverPingInterval = micros(seconds: max(0, announced.pingInterval))
            view.serverPingTimeout = micros(seconds: max(0, announced.pingTimeout))
        }
    }

    /// The connection is over (close handshake completed, transport ended): where
    /// `delayFrom: closed` counts the next delay from.
    private mutating func noteClosed(_ conn: ConnectionID, at t: Micros) {
        if let v = ctx.connections.index(of: conn), ctx.connections[at: v].closedAt == nil {
            ctx.connections[at: v].closedAt = t
        }
        if lastDrop?.conn == conn, lastDrop?.closedAt == nil { lastDrop?.closedAt = t }
    }

    /// Where the delay of the attempt after `drop`, opened at `t`, starts (`BackoffSpec.delayFrom`).
    private func delayStart(after drop: Drop, openedAt t: Micros) -> Micros {
        guard spec.backoff.delayFrom == .closed else { return drop.t }
        let timedOut = spec.backoff.closeTimeout.map { drop.t.addingSaturated($0) }
        let start = [drop.closedAt, timedOut].compactMap { $0 }.min() ?? drop.t
        return min(start, t)
    }

    mutating func end(_ record: EndRecord, into events: inout [AnalysisEvent]) {
        advance(to: record.t, into: &events)
        timersQuietUntil = Micros.min
        // An end on the upstream leg is the proxy's business: the client learns of it only
        // when the proxy passes it on, which is recorded on the client's leg.
        guard record.seenByClient, let view = ctx.connections[record.conn] else { return }
        let name = record.kind == .captureEnd ? "capture end" : "\(record.kind.rawValue.uppercased()) from \(record.side.rawValue)"
        let evidence = Evidence(conn: record.conn, t: record.t, from: record.kind == .captureEnd ? nil : record.side, summary: name)
        if view.droppedAt == nil, record.kind != .captureEnd {
            drop(conn: record.conn, t: record.t, code: nil, by: record.side, action: .backoff,
                 cause: name, evidence: evidence, fault: view.lastFault,
                 stale: record.side == .client && isStale(record.conn, at: record.t), into: &events)
        }
        if record.kind != .captureEnd { noteClosed(record.conn, at: record.t) }
        if var summary = takeSummary(record.conn) {
            summary.endedAt = record.t
            if summary.end == nil { summary.end = name }
            events.append(.connectionEnded(summary))
        }
    }

    /// Once both peers have sent their close frame the WebSocket is over, whether or not a
    /// TCP end is ever recorded (the proxy closes its sockets right after the handshake).
    /// Ending the connection's summary here gives it its true span, and frees it, so a
    /// client's closed connections do not pile up until the capture ends.
    private mutating func closeHandshakeCompleted(_ conn: ConnectionID, at t: Micros, into events: inout [AnalysisEvent]) {
        guard let view = ctx.connections[conn], view.clientClose != nil, view.serverClose != nil,
              var summary = takeSummary(conn) else { return }
        summary.endedAt = t
        events.append(.connectionEnded(summary))
    }

    mutating func fault(_ record: FaultRecord, into events: inout [AnalysisEvent]) {
        timersQuietUntil = Micros.min
        if let conn = record.conn, let v = ctx.connections.index(of: conn) {
            ctx.connections[at: v].lastFault = record.rule
        }
        events.append(.fault(FaultMark(client: info.id, conn: record.conn, t: record.t, rule: record.rule, detail: record.detail)))
    }

    /// Runs timer checks up to `now`.
    mutating func advance(to now: Micros, into events: inout [AnalysisEvent]) {
        // The quiet time first: it sits in the timeline itself, while reading `timerRules`
        // means touching another allocation per client on every record and sweep.
        guard now > timersQuietUntil, !plan.timerRules.isEmpty else { return }
        // (Every rule is asked in the old way without shortcuts, and for a spec of more
        // timer rules than the walk's mask below has bits: the registry has 24 rules.)
        guard shortcuts, plan.timerRules.count <= 64 else {
            for i in plan.timerRules {
                // The rule's findings first, then the call on `self`: as one expression, the
                // receiver (a copy of the timeline) would be read before the rule changed, and
                // the rules' array and boxes would be copied on every call.
                let found = rules[i].advance(to: now, ctx)
                attribute(found, into: &events)
            }
            return
        }
        // Each rule is asked its quiet time first and advanced only once `now` is past it
        // (up to it, `advance` can neither find nor change anything): most walks follow a
        // step that touched no deadline. The questions go through a mutable access
        // (`askQuietUntil`). Findings come in rule order, as when every rule was advanced.
        var quiet = Micros.max
        var due: UInt64 = 0  // bit n: the n-th timer rule is due
        for (n, i) in plan.timerRules.enumerated() {
            let until = rules[i].askQuietUntil(ctx)
            if now > until { due |= 1 << n } else { quiet = min(quiet, until) }
        }
        guard due != 0 else {
            timersQuietUntil = quiet
            return
        }
        for (n, i) in plan.timerRules.enumerated() where due & (1 << n) != 0 {
            let found = rules[i].advance(to: now, ctx)  // before `attribute`: see above
            attribute(found, into: &events)
            quiet = min(quiet, rules[i].askQuietUntil(ctx))
        }
        timersQuietUntil = quiet
    }

    /// Up to this record time `advance` returns at once (its first guard): the client's
    /// deadline in its shard's sweep (`ClientShard`), which skips the client until then.
    var sweepDeadline: Micros { plan.timerRules.isEmpty ? Micros.max : timersQuietUntil }

    /// The earliest record time past which a timer rule could find anything or change, as
    /// long as no step reaches the client (the least `quietUntil` of its timer rules;
    /// `Micros.max`: none can). A sweep up to this time changes nothing, so a client put
    /// to sleep (`ClientShard`) is woken only by a sweep beyond it.
    var wakeTime: Micros {
        var wake = Micros.max
        for i in plan.timerRules { wake = min(wake, rules[i].quietUntil(ctx)) }
        return wake
    }

    /// A server frame that changes nothing a timer rule reads except moving the receipt
    /// time forward (`quietUntil`'s condition): not a close, no protocol event, not the
    /// first receipt or pong after a ping, and no rule observes such frames.
    private func isPlainReceipt(_ record: FrameRecord, event: RealtimeEvent?) -> Bool {
        guard shortcuts, record.from == .server, record.opcode != .close, (event?.kind ?? .other) == .other,
              !plan.observesServerOtherFrames else { return false }
        guard let v = ctx.connections.index(of: record.conn) else { return true }
        // Read where the view lies: a copy of the whole view per frame showed in the profile.
        let pingViewsStay = ctx.connections[at: v].lastPing.isAbsent
            || (ctx.connections[at: v].receivedSincePing.isPresent
                && (ctx.connections[at: v].pongSincePing.isPresent || record.opcode != .pong))
        return pingViewsStay && record.t >= ctx.connections[at: v].lastReceivedAt
    }

    mutating func finish(at now: Micros, into events: inout [AnalysisEvent]) {
        timersQuietUntil = Micros.min
        for i in rules.indices {
            let found = rules[i].finish(at: now, ctx)
            attribute(found, into: &events)
        }
        for rule in rules {
            for check in rule.undetermined(at: now, ctx) { events.append(.undetermined(check)) }
        }
        for var summary in summaries.sorted(by: { $0.conn < $1.conn }) {
            summary.endedAt = now
            if summary.end == nil { summary.end = "capture end" }
            events.append(.connectionEnded(summary))
        }
        summaries.removeAll()
    }

    // MARK: state changes

    private mutating func connected(conn: ConnectionID, t: Micros, cause: String, evidence: Evidence,
                                    into events: inout [AnalysisEvent]) {
        if spec.backoff.resetOnConnect, spec.backoff.resetAfterUptime == nil {
            attempts = 0
            lastDelay = nil
        }
        interruptedAt = nil
        lastDrop = nil
        if let i = summaryIndex(conn) { summaries[i].connectedAt = t }
        setState(plan.states.connected, conn: conn, t: t, cause: cause, evidence: evidence, into: &events)
    }

    private mutating func drop(conn: ConnectionID, t: Micros, code: UInt16?, by side: Side?, action: CloseAction,
                               cause: String, evidence: Evidence, fault: String?, stale: Bool = false,
                               into events: inout [AnalysisEvent]) {
        guard let v = ctx.connections.index(of: conn) else { return }
        ctx.connections[at: v].droppedAt = t
        let view = ctx.connections[at: v]
        if let i = summaryIndex(conn) {
            summaries[i].closeCode = code
            summaries[i].closedBy = code == nil ? nil : side
            summaries[i].end = cause
        }
        // Only the client's newest connection moves its state.
        guard conn == order.last else { return }
        let wasConnected = view.connectedAt != nil
        if spec.backoff.resetOnConnect, let uptime = spec.backoff.resetAfterUptime, let since = view.connectedAt,
           t.subtractingSaturated(since) >= uptime {
            attempts = 0
            lastDelay = nil
            shortSessions.reset()
        }
        var shortCount = shortSessions.count
        if let rule = spec.backoff.shortSessions, let since = view.connectedAt {
            shortCount = shortSessions.noteDrop(uptime: t.subtractingSaturated(since), at: t, rule)
        }
        let (honoured, endingNote) = action.after(view.ending, from: view.endingFrom)
        var action = honoured
        var cause = endingNote.map { "\(cause) (\($0))" } ?? cause
        if action == .backoff, let most = spec.backoff.maxAttempts, attempts >= most {
            // The client's own limit: it gives up, and any further attempt is a retry of `failed`.
            action = .fail
            cause += " (gave up after \(attempts) attempts)"
        }
        if interruptedAt == nil, action == .backoff || action == .immediate { interruptedAt = t }
        if action == .disconnect || action == .fail { interruptedAt = nil }
        let newState: StateID
        switch action {
        case .fail: newState = plan.states.failed
        case .disconnect: newState = plan.states.disconnected
        case .immediate: newState = plan.states.connecting
        case .backoff:
            let elapsed = t - (interruptedAt ?? t)
            if let giveUp = spec.backoff.giveUpAfter, elapsed >= giveUp {
                newState = plan.states.failed
            } else {
                newState = spec.phase(at: elapsed).flatMap { ctx.states.id(of: $0.state) } ?? plan.states.connecting
            }
        }
        let drop = Drop(conn: conn, t: t, closeCode: code, closedBy: side, action: action, wasConnected: wasConnected,
                        newState: ctx.states.name(of: newState), cause: cause, evidence: evidence, fault: fault, nextAttempt: attempts + 1,
                        interruptedAt: interruptedAt, previousDelay: lastDelay, stale: stale, shortSessions: shortCount)
        lastDrop = drop
        if action == .disconnect { attemptsWithoutReset = 0 }
        setState(newState, conn: conn, t: t, cause: cause, evidence: evidence, into: &events)
        run(.drop(drop), into: &events)
    }

    private mutating func setState(_ new: StateID, conn: ConnectionID?, t: Micros, cause: String, evidence: Evidence?,
                                   into events: inout [AnalysisEvent]) {
        guard new != ctx.stateID else { return }
        let old = ctx.state
        ctx.stateID = new
        events.append(.transition(Transition(client: info.id, conn: conn, t: t, from: old, to: ctx.state, cause: cause,
                                             evidence: evidence)))
    }

    /// Hands the step to the rules that observe its kind (`RulePlan.observers`, one table
    /// per spec), in rule order.
    private mutating func run(_ step: TimelineStep, into events: inout [AnalysisEvent]) {
        run(step, kind: step.kind, into: &events)
    }

    /// `run` of a step whose kind the caller knows: `kind` of a frame step binds (copies)
    /// its record and event, once more per frame.
    private mutating func run(_ step: TimelineStep, kind: StepKinds, into events: inout [AnalysisEvent]) {
        let interested = plan.observers[kind.rawValue.trailingZeroBitCount]
        for i in interested {
            let found = rules[i].observe(step, ctx)  // before `attribute`: see `advance`
            attribute(found, into: &events)
        }
    }

    /// Names the injected fault a finding came after: one that touched its connection, or
    /// the one that ended the connection before it. Only a rule says a fault *caused* its
    /// finding (`causedByFault`), where the fault explains it; coming after a fault is not
    /// being caused by it (a client's bug shown by a fault is still the client's bug).
    private func attribute(_ findings: [Finding], into events: inout [AnalysisEvent]) {
        for var finding in findings {
            if finding.causedByFault == nil, finding.afterFault == nil {
                finding.afterFault = ctx.connections[finding.conn]?.lastFault ?? causeFault[finding.conn]
            }
            events.append(.finding(finding))
        }
    }

    private func summaryIndex(_ conn: ConnectionID) -> Int? { summaries.firstIndex { $0.conn == conn } }

    /// The bar of `conn`, no longer kept: its connection ended.
    private mutating func takeSummary(_ conn: ConnectionID) -> ConnectionLifespan? {
        summaryIndex(conn).map { summaries.remove(at: $0) }
    }

    private mutating func pruneViews() {
        while order.count > 4 {
            let old = order.removeFirst()
            ctx.connections.remove(old)
            causeFault.removeValue(forKey: old)
        }
    }

    /// A frame's evidence: where and when, and its summary.
    static func evidence(_ record: FrameRecord, _ event: RealtimeEvent?) -> Evidence {
        Evidence(conn: record.conn, t: record.t, from: record.from, summary: summary(record, event))
    }

    static func summary(_ record: FrameRecord, _ event: RealtimeEvent?) -> String {
        var text = record.opcode.name
        if let code = record.closeCode {
            text += " \(code)"
            if let reason = record.closeReason, !reason.isEmpty { text += " '\(reason)'" }
        } else if let name = event?.name {
            // One interpolation, not an append per piece (each a string made and grown), and
            // the event read through the optional (`if let event` copied it).
            let opcode = text
            text = (event?.targetChannel).map { "\(opcode) \(name) \($0)" } ?? "\(opcode) \(name)"
        } else if record.opcode == .text, let body = record.text {
            text += " " + (body.count > 60 ? String(body.prefix(57)) + "..." : body)
        }
        if record.action != .forwarded && record.action != .observed { text += " (\(record.action.name))" }
        return text
    }
}

/// An immutable value on the heap, for a large field most instances leave empty.
final class Box<Value: Sendable>: Sendable {
    let value: Value
    init(_ value: Value) { self.value = value }
}
