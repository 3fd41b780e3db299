import Capture
import Protocols
import Vocabulary
import WebSocket

/// One client's state machine: turns its connections' records into timeline steps,
/// transitions and rule findings. Keeps only this client's state.
struct ClientTimeline {
    let info: ClientInfo
    private(set) var spec: LifecycleSpec
    let appSecret: String?
    private(set) var state: String
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
    private var views: [ConnectionID: ConnectionView] = [:]
    /// Connection order, newest last; views of old connections are dropped beyond a few.
    private var order: [ConnectionID] = []
    private var summaries: [ConnectionID: ConnectionLifespan] = [:]
    /// The fault that ended the previous connection, per new connection.
    private var causeFault: [ConnectionID: String] = [:]
    private var lastDrop: Drop?
    private var attempts = 0
    private var attemptsWithoutReset = 0
    /// The delay of the latest attempt since the counter's reset (decorrelated jitter).
    private var lastDelay: Micros?
    private var interruptedAt: Micros?
    // Which connection the client holds and when it was last active (client grouping)
    // are the router's to know (`ClientRouter`), not the timeline's.

    /// `shortcuts: false` hands every step to every rule and asks every timer rule on every
    /// record, as before `observes` and `quietUntil` existed: tests compare both ways
    /// (the plans must be made with the same setting).
    init(info: ClientInfo, spec: LifecycleSpec, plan: RulePlan, appSecret: String?, shortcuts: Bool = true,
         fallback: LifecycleSpec? = nil, fallbackPlan: RulePlan? = nil) {
        self.info = info
        self.spec = spec
        self.appSecret = appSecret
        self.state = spec.states.initial
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
    private mutating func settleProtocol(_ record: FrameRecord, event: RealtimeEvent?) -> [AnalysisEvent] {
        guard !protocolDecided, let fallback, let fallbackPlan else { return [] }
        if event != nil {
            protocolDecided = true
            return []
        }
        guard record.opcode == .text || record.opcode == .binary, record.action != .injected,
              let view = views[record.conn], let upgradedAt = view.upgradedAt else { return [] }
        protocolDecided = true
        connectionLevel = true
        spec = fallback
        plan = fallbackPlan
        rules = fallbackPlan.makeRules()
        timersQuietUntil = Micros.min
        guard view.connectedAt == nil, view.droppedAt == nil else { return [] }
        var connectedView = view
        connectedView.connectedAt = upgradedAt
        views[record.conn] = connectedView
        let evidence = Evidence(conn: record.conn, t: upgradedAt, from: .server, summary: "upgrade response 101")
        return connected(conn: record.conn, t: upgradedAt, cause: "upgrade 101 (no protocol events: connection level)",
                         evidence: evidence)
    }

    var context: RuleContext {
        RuleContext(spec: spec, client: info.id, appSecret: appSecret, connections: views,
                    current: order.last, state: state)
    }

    /// The first event of the client: its `initialized` state.
    func start() -> [AnalysisEvent] {
        [.transition(Transition(client: info.id, conn: nil, t: info.firstSeen, from: nil, to: state,
                                cause: "first observation", evidence: nil))]
    }

    // MARK: records

    mutating func open(_ record: OpenRecord) -> [AnalysisEvent] {
        var events = advance(to: record.t)
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
        }
        var view = ConnectionView(conn: record.conn, openedAt: record.t,
                                  activityTimeout: spec.stale?.activityTimeout ?? 0)
        view.lastReceivedAt = record.t
        view.serverPingInterval = spec.stale?.interval ?? 0
        view.serverPingTimeout = spec.stale?.pongTimeout ?? 0
        views[record.conn] = view
        order.append(record.conn)
        pruneViews()
        summaries[record.conn] = ConnectionLifespan(conn: record.conn, client: info.id, openedAt: record.t)
        var cause = "tcp open"
        if spec.reportDelays, let delay, let drop = lastDrop {
            cause += ": retry \(attempts), \(formatSeconds(delay)) after \(drop.cause)"
        }
        events += setState(spec.states.connecting, conn: record.conn, t: record.t, cause: cause, evidence: evidence)
        let attempt = Attempt(conn: record.conn, t: record.t, number: attempts, numberWithoutReset: attemptsWithoutReset,
                              fromState: fromState, previousDrop: lastDrop, delay: delay, previousDelay: previousDelay,
                              interruptedAt: interruptedAt, evidence: evidence)
        events += run(.attempt(attempt))
        return events
    }

    mutating func upgrade(_ record: UpgradeRecord) -> [AnalysisEvent] {
        var events = advance(to: record.t)
        timersQuietUntil = Micros.min
        guard record.from == .server, var view = views[record.conn] else { return events }
        events += run(.upgradeResponse(conn: record.conn, t: record.t, status: record.status))
        let status = record.status ?? 0
        let evidence = Evidence(conn: record.conn, t: record.t, from: .server, summary: "upgrade response \(status)")
        if status == 101 {
            view.upgradedAt = record.t
            views[record.conn] = view
            if spec.connectedOn == .upgrade {
                view.connectedAt = record.t
                views[record.conn] = view
                events += connected(conn: record.conn, t: record.t, cause: "upgrade 101", evidence: evidence)
            }
        } else if view.droppedAt == nil {
            let action: CloseAction = spec.refusalStatuses.contains(status) ? .fail : .backoff
            events += drop(conn: record.conn, t: record.t, code: nil, by: .server, action: action,
                           cause: "upgrade refused \(status)", evidence: evidence, fault: nil)
        }
        return events
    }

    mutating func frame(_ record: FrameRecord, event: RealtimeEvent?) -> [AnalysisEvent] {
        var events = advance(to: record.t)
        if !isPlainReceipt(record, event: event) { timersQuietUntil = Micros.min }
        if !protocolDecided, fallback != nil { events += settleProtocol(record, event: event) }
        guard var view = views[record.conn] else { return events }
        if let fault = record.fault { view.lastFault = fault }
        // Built only when a view or step keeps it: most frames are plain receipts, for
        // which the summary string would be made and thrown away.
        func evidence() -> Evidence {
            Evidence(conn: record.conn, t: record.t, from: record.from, summary: Self.summary(record, event))
        }
        if record.from == .server {
            // A frame a fault swallowed never reached the client.
            if record.action == .dropped {
                if view.lastPing != nil, view.pongSincePing == nil, view.swallowedPongFault == nil,
                   record.opcode == .pong || event?.kind == .pong {
                    view.swallowedPongFault = record.fault
                }
                views[record.conn] = view
                return events
            }
            view.lastReceivedAt = record.t
            if view.lastPing != nil {
                if view.receivedSincePing == nil { view.receivedSincePing = evidence() }
                if view.pongSincePing == nil, record.opcode == .pong || event?.kind == .pong,
                   view.lastPingRef == nil || event?.ref == nil || event?.ref == view.lastPingRef {
                    view.pongSincePing = evidence()
                }
            }
            if let event { noteServerLiveness(event, record: record, in: &view, evidence: evidence) }
            views[record.conn] = view
            if event?.kind == .connectionEstablished, let event {
                view.handshakeAt = record.t
                view.socketID = event.socketID
                view.handshakeMissingID = event.socketID == nil
                if let stale = spec.stale {
                    view.activityTimeout = stale.handshakeOverrides
                        ? event.activityTimeout.flatMap(handshakeActivityTimeout(seconds:)) ?? stale.activityTimeout : stale.activityTimeout
                }
                views[record.conn] = view
                events += run(.handshake(Handshake(conn: record.conn, t: record.t, socketID: event.socketID,
                                                   activityTimeout: event.activityTimeout, evidence: evidence(),
                                                   rewrittenBy: record.action == .injected ? record.fault : nil)))
                let connects = spec.connectedOn == .ack || (event.socketID != nil && spec.connectedOn == .handshake)
                if connects, view.droppedAt == nil {
                    view.connectedAt = record.t
                    views[record.conn] = view
                    let cause = spec.connectedOn == .ack ? "handshake \(event.name)" : "handshake socket_id \(event.socketID ?? "")"
                    events += connected(conn: record.conn, t: record.t, cause: cause, evidence: evidence())
                }
                return events
            }
            if record.opcode == .close, view.serverClose == nil {
                view.serverClose = evidence()
                views[record.conn] = view
            }
            events += run(.frame(record, event))
            if record.opcode == .close { events += closeFrame(record, droppedBefore: view.droppedAt != nil, evidence: evidence()) }
            return events
        }
        // From the client.
        if record.opcode == .ping || event?.kind == .ping {
            view.lastPing = evidence()
            view.receivedSincePing = nil
            view.pongSincePing = nil
            view.swallowedPongFault = nil
            view.lastPingRef = event?.ref
        }
        if record.opcode == .pong || event?.kind == .pong, view.lastServerPing != nil, view.pongToServerPing == nil {
            view.pongToServerPing = evidence()
        }
        if record.opcode == .close, view.clientClose == nil {
            view.clientClose = evidence()
            view.clientCloseCode = record.closeCode
        }
        views[record.conn] = view
        events += run(.frame(record, event))
        if record.opcode == .close { events += closeFrame(record, droppedBefore: view.droppedAt != nil, evidence: evidence()) }
        return events
    }

    /// A close frame from either side: the first end of the connection the client learns of
    /// decides its next state; the second close completes the handshake.
    private mutating func closeFrame(_ record: FrameRecord, droppedBefore: Bool, evidence: Evidence) -> [AnalysisEvent] {
        var events: [AnalysisEvent] = []
        if !droppedBefore {
            let code = record.closeCode
            let stale = record.from == .client && isStale(record.conn, at: record.t)
            var action = spec.action(forClose: code, closedBy: record.from)
            // The client gave up a dead connection: a stale close whatever its code, never
            // the app's disconnect(), so the retry after it is checked.
            if stale, action == .disconnect { action = .backoff }
            events += drop(conn: record.conn, t: record.t, code: code, by: record.from, action: action,
                           cause: "close \(code.map(String.init) ?? "(no code)") from \(record.from.rawValue)", evidence: evidence,
                           fault: record.fault ?? (record.action == .injected ? "injected close" : nil), stale: stale)
        }
        if let view = views[record.conn], view.clientClose != nil, view.serverClose != nil { noteClosed(record.conn, at: record.t) }
        return events + closeHandshakeCompleted(record.conn, at: record.t)
    }

    /// Whether the spec's liveness model counts the connection dead at `t` (`StaleSpec.missed`).
    private func isStale(_ conn: ConnectionID, at t: Micros) -> Bool {
        guard let stale = spec.stale, let view = views[conn] else { return false }
        return stale.missed(view, at: t, tolerance: spec.tolerances.timing) != nil
    }

    /// The liveness facts a server event carries: a server ping (server-driven models) and
    /// the ping schedule the server announces, which replaces the spec's when it may.
    private func noteServerLiveness(_ event: RealtimeEvent, record: FrameRecord, in view: inout ConnectionView,
                                    evidence: () -> Evidence) {
        if event.kind == .ping {
            view.lastServerPing = evidence()
            view.pongToServerPing = nil
        }
        if let announced = event.liveness, let stale = spec.stale, stale.model == .serverPing, stale.handshakeOverrides {
            view.serverPingInterval = micros(seconds: max(0, announced.pingInterval))
            view.serverPingTimeout = micros(seconds: max(0, announced.pingTimeout))
        }
    }

    /// The connection is over (close handshake completed, transport ended): where
    /// `delayFrom: closed` counts the next delay from.
    private mutating func noteClosed(_ conn: ConnectionID, at t: Micros) {
        if var view = views[conn], view.closedAt == nil {
            view.closedAt = t
            views[conn] = view
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

    mutating func end(_ record: EndRecord) -> [AnalysisEvent] {
        var events = advance(to: record.t)
        timersQuietUntil = Micros.min
        // An end on the upstream leg is the proxy's business: the client learns of it only
        // when the proxy passes it on, which is recorded on the client's leg.
        guard record.seenByClient, let view = views[record.conn] else { return events }
        let name = record.kind == .captureEnd ? "capture end" : "\(record.kind.rawValue.uppercased()) from \(record.side.rawValue)"
        let evidence = Evidence(conn: record.conn, t: record.t, from: record.kind == .captureEnd ? nil : record.side, summary: name)
        if view.droppedAt == nil, record.kind != .captureEnd {
            events += drop(conn: record.conn, t: record.t, code: nil, by: record.side, action: .backoff,
                           cause: name, evidence: evidence, fault: view.lastFault,
                           stale: record.side == .client && isStale(record.conn, at: record.t))
        }
        if record.kind != .captureEnd { noteClosed(record.conn, at: record.t) }
        if var summary = summaries.removeValue(forKey: record.conn) {
            summary.endedAt = record.t
            if summary.end == nil { summary.end = name }
            events.append(.connectionEnded(summary))
        }
        return events
    }

    /// Once both peers have sent their close frame the WebSocket is over, whether or not a
    /// TCP end is ever recorded (the proxy closes its sockets right after the handshake).
    /// Ending the connection's summary here gives it its true span, and frees it, so a
    /// client's closed connections do not pile up until the capture ends.
    private mutating func closeHandshakeCompleted(_ conn: ConnectionID, at t: Micros) -> [AnalysisEvent] {
        guard let view = views[conn], view.clientClose != nil, view.serverClose != nil,
              var summary = summaries.removeValue(forKey: conn) else { return [] }
        summary.endedAt = t
        return [.connectionEnded(summary)]
    }

    mutating func fault(_ record: FaultRecord) -> [AnalysisEvent] {
        timersQuietUntil = Micros.min
        if let conn = record.conn, var view = views[conn] {
            view.lastFault = record.rule
            views[conn] = view
        }
        return [.fault(FaultMark(client: info.id, conn: record.conn, t: record.t, rule: record.rule, detail: record.detail))]
    }

    /// Runs timer checks up to `now`.
    mutating func advance(to now: Micros) -> [AnalysisEvent] {
        // The quiet time first: it sits in the timeline itself, while reading `timerRules`
        // means touching another allocation per client on every record and sweep.
        guard now > timersQuietUntil, !plan.timerRules.isEmpty else { return [] }
        var findings: [Finding] = []
        let context = self.context
        for i in plan.timerRules { findings += rules[i].advance(to: now, context) }
        if shortcuts {
            var quiet = Micros.max
            for i in plan.timerRules { quiet = min(quiet, rules[i].quietUntil(context)) }
            timersQuietUntil = quiet
        }
        return attribute(findings)
    }

    /// A server frame that changes nothing a timer rule reads except moving the receipt
    /// time forward (`quietUntil`'s condition): not a close, no protocol event, not the
    /// first receipt or pong after a ping, and no rule observes such frames.
    private func isPlainReceipt(_ record: FrameRecord, event: RealtimeEvent?) -> Bool {
        guard shortcuts, record.from == .server, record.opcode != .close, event.map({ $0.kind == .other }) ?? true,
              plan.observers[StepKinds.serverOtherFrame.rawValue.trailingZeroBitCount].isEmpty else { return false }
        guard let view = views[record.conn] else { return true }
        let pingViewsStay = view.lastPing == nil
            || (view.receivedSincePing != nil && (view.pongSincePing != nil || record.opcode != .pong))
        return pingViewsStay && record.t >= view.lastReceivedAt
    }

    mutating func finish(at now: Micros) -> [AnalysisEvent] {
        timersQuietUntil = Micros.min
        var findings: [Finding] = []
        let context = self.context
        for i in rules.indices { findings += rules[i].finish(at: now, context) }
        var events = attribute(findings)
        for rule in rules { events += rule.undetermined(at: now, context).map { .undetermined($0) } }
        for (_, var summary) in summaries.sorted(by: { $0.key < $1.key }) {
            summary.endedAt = now
            if summary.end == nil { summary.end = "capture end" }
            events.append(.connectionEnded(summary))
        }
        summaries.removeAll()
        return events
    }

    // MARK: state changes

    private mutating func connected(conn: ConnectionID, t: Micros, cause: String, evidence: Evidence) -> [AnalysisEvent] {
        if spec.backoff.resetOnConnect, spec.backoff.resetAfterUptime == nil {
            attempts = 0
            lastDelay = nil
        }
        interruptedAt = nil
        lastDrop = nil
        summaries[conn]?.connectedAt = t
        return setState(spec.states.connected, conn: conn, t: t, cause: cause, evidence: evidence)
    }

    private mutating func drop(conn: ConnectionID, t: Micros, code: UInt16?, by side: Side?, action: CloseAction,
                               cause: String, evidence: Evidence, fault: String?, stale: Bool = false) -> [AnalysisEvent] {
        guard var view = views[conn] else { return [] }
        view.droppedAt = t
        views[conn] = view
        summaries[conn]?.closeCode = code
        summaries[conn]?.closedBy = code == nil ? nil : side
        summaries[conn]?.end = cause
        // Only the client's newest connection moves its state.
        guard conn == order.last else { return [] }
        let wasConnected = view.connectedAt != nil
        if spec.backoff.resetOnConnect, let uptime = spec.backoff.resetAfterUptime, let since = view.connectedAt,
           t.subtractingSaturated(since) >= uptime {
            attempts = 0
            lastDelay = nil
        }
        var action = action
        var cause = cause
        if action == .backoff, let most = spec.backoff.maxAttempts, attempts >= most {
            // The client's own limit: it gives up, and any further attempt is a retry of `failed`.
            action = .fail
            cause += " (gave up after \(attempts) attempts)"
        }
        if interruptedAt == nil, action == .backoff || action == .immediate { interruptedAt = t }
        if action == .disconnect || action == .fail { interruptedAt = nil }
        let newState: String
        switch action {
        case .fail: newState = spec.states.failed
        case .disconnect: newState = spec.states.disconnected
        case .immediate: newState = spec.states.connecting
        case .backoff:
            let elapsed = t - (interruptedAt ?? t)
            if let giveUp = spec.backoff.giveUpAfter, elapsed >= giveUp {
                newState = spec.states.failed
            } else {
                newState = spec.phase(at: elapsed)?.state ?? spec.states.connecting
            }
        }
        let drop = Drop(conn: conn, t: t, closeCode: code, closedBy: side, action: action, wasConnected: wasConnected,
                        newState: newState, cause: cause, evidence: evidence, fault: fault, nextAttempt: attempts + 1,
                        interruptedAt: interruptedAt, previousDelay: lastDelay, stale: stale)
        lastDrop = drop
        if action == .disconnect { attemptsWithoutReset = 0 }
        var events = setState(newState, conn: conn, t: t, cause: cause, evidence: evidence)
        events += run(.drop(drop))
        return events
    }

    private mutating func setState(_ new: String, conn: ConnectionID?, t: Micros, cause: String, evidence: Evidence?) -> [AnalysisEvent] {
        guard new != state else { return [] }
        let old = state
        state = new
        return [.transition(Transition(client: info.id, conn: conn, t: t, from: old, to: new, cause: cause, evidence: evidence))]
    }

    private mutating func run(_ step: TimelineStep) -> [AnalysisEvent] {
        let interested = plan.observers[step.kind.rawValue.trailingZeroBitCount]
        guard !interested.isEmpty else { return [] }
        var findings: [Finding] = []
        let context = self.context
        for i in interested { findings += rules[i].observe(step, context) }
        return attribute(findings)
    }

    /// Names the injected fault a finding came after: one that touched its connection, or
    /// the one that ended the connection before it. Only a rule says a fault *caused* its
    /// finding (`causedByFault`), where the fault explains it; coming after a fault is not
    /// being caused by it (a client's bug shown by a fault is still the client's bug).
    private func attribute(_ findings: [Finding]) -> [AnalysisEvent] {
        findings.map { finding in
            var finding = finding
            if finding.causedByFault == nil, finding.afterFault == nil {
                finding.afterFault = views[finding.conn]?.lastFault ?? causeFault[finding.conn]
            }
            return .finding(finding)
        }
    }

    private mutating func pruneViews() {
        while order.count > 4 {
            let old = order.removeFirst()
            views.removeValue(forKey: old)
            causeFault.removeValue(forKey: old)
        }
    }

    static func summary(_ record: FrameRecord, _ event: RealtimeEvent?) -> String {
        var text = record.opcode.name
        if let code = record.closeCode {
            text += " \(code)"
            if let reason = record.closeReason, !reason.isEmpty { text += " '\(reason)'" }
        } else if let event {
            text += " \(event.name)"
            if let channel = event.targetChannel { text += " \(channel)" }
        } else if record.opcode == .text, let body = record.text {
            text += " " + (body.count > 60 ? String(body.prefix(57)) + "..." : body)
        }
        if record.action != .forwarded && record.action != .observed { text += " (\(record.action.name))" }
        return text
    }
}
