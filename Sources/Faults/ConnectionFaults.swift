import Protocols
import Capture
import Vocabulary
import WebSocket

/// A fault's firing, for the relay to record and carry out.
public struct FaultOutcome: Sendable, Hashable {
    /// The rule as written.
    public var rule: String
    public var kind: String
    /// For the fault record, when the fault wants one written.
    public var report: String?
    public var target: Side?
    public var effects: [FaultEffect]
}

/// What the active faults decided about one frame.
public struct FrameDecision: Sendable, Hashable {
    public var dropped = false
    /// Total hold-back, when a latency fault delays the frame.
    public var delay: Micros = 0
    /// The payload to send instead, when a fault rewrote it.
    public var rewritten: [UInt8]?
    /// Send the message as this many frames (`fragment:N`).
    public var fragments: Int?
    /// Write the frame's bytes in these pieces, `gap` apart (`slicer`).
    public var slices: (pieces: [Int], gap: Micros)?
    /// The rule that touched the frame (the first, when several did), for its record.
    public var rule: String?
    /// Reports and effects raised while judging the frame.
    public var outcomes: [FaultOutcome] = []

    public static let untouched = FrameDecision()

    public static func == (lhs: FrameDecision, rhs: FrameDecision) -> Bool {
        lhs.dropped == rhs.dropped && lhs.delay == rhs.delay && lhs.rewritten == rhs.rewritten
            && lhs.fragments == rhs.fragments && lhs.slices?.pieces == rhs.slices?.pieces
            && lhs.slices?.gap == rhs.slices?.gap && lhs.rule == rhs.rule && lhs.outcomes == rhs.outcomes
    }

    public func hash(into hasher: inout Hasher) {
        hasher.combine(dropped); hasher.combine(delay); hasher.combine(rewritten); hasher.combine(fragments)
        hasher.combine(slices?.pieces); hasher.combine(slices?.gap); hasher.combine(rule); hasher.combine(outcomes)
    }
}

/// The faults of one connection: decides, per rule, whether the connection is in scope and
/// when the trigger fires, then forwards events to the armed faults and gathers their
/// verdicts. Owned by the connection's `RelaySession`; pure apart from reading the shared
/// engine's rule list.
public struct ConnectionFaults: Sendable {
    /// `over`: the rule's `for=` ran out; it acts no more on this connection.
    enum Phase: Sendable { case undecided, outOfScope, waiting, armed, over }

    struct Instance: Sendable {
        /// Engine id, or nil for a rule applied to this connection only.
        var id: Int?
        var rule: FaultRule
        var fault: any Fault
        var random: SeededGenerator
        var phase: Phase
        /// Applied to this connection through the control API: its scope is this connection,
        /// and its start conditions count from the moment it was applied.
        var immediate: Bool
        var startAt: Micros
        var eventSeen: Bool
        /// Frames relayed before the rule came (for `frames=` of an applied rule).
        var framesBase = 0
        var wakeup: Micros?
        /// When `for=` ends the fault, once armed.
        var expiresAt: Micros?
    }

    public let engine: FaultEngine
    public let conn: ConnectionID
    /// The connection's ordinal within the proxy (1, 2, ...), for `conn=` and `every=`:
    /// given when the client's request has been read, so a TCP connection that never sends
    /// one (a load balancer's health check, a port probe) takes no number. Nil until then.
    public private(set) var ordinal: Int?
    public let openedAt: Micros
    public private(set) var clientKey: String?
    /// The upgrade request's `Host` and target, for `host=` and `path=`.
    private var requestHost: String?
    private var requestPath: String?
    var instances: [Instance] = []
    var knownVersion = -1
    var websocketOpen = false
    var framesRelayed = 0
    var applyCount: UInt64 = 0

    public init(engine: FaultEngine, conn: ConnectionID, openedAt: Micros) {
        self.engine = engine
        self.conn = conn
        self.openedAt = openedAt
        _ = refresh(now: openedAt)
    }

    /// Whether an armed fault needs the whole payload of a frame from `side` with this
    /// opcode (see `Fault.needsWholeFrame`): the relay gathers a large frame only then.
    public func needsWholeFrame(from side: Side, opcode: Opcode) -> Bool {
        instances.contains { $0.phase == .armed && $0.fault.needsWholeFrame(from: side, opcode: opcode) }
    }

    /// The earliest time something is due (a start condition, a fault's wake-up).
    public var nextWakeup: Micros? {
        instances.compactMap { instance -> Micros? in
            switch instance.phase {
            case .waiting where websocketOpen && frameConditionsMet(instance)
                && !type(of: instance.fault).actsAtUpgrade:
                return instance.startAt
            case .armed: return [instance.wakeup, instance.expiresAt].compactMap { $0 }.min()
            default: return nil
            }
        }.min()
    }

    // MARK: Events from the relay

    /// Picks up rules added or removed through the engine and rules applied to this connection.
    public mutating func refresh(now: Micros) -> [FaultOutcome] {
        let version = engine.version
        guard version != knownVersion else { return [] }
        knownVersion = version
        let snapshot = engine.snapshot()
        let live = Set(snapshot.entries.map(\.id))
        instances.removeAll { instance in instance.id.map { !live.contains($0) } ?? false }
        let known = Set(instances.compactMap(\.id))
        for entry in snapshot.entries where !known.contains(entry.id) {
            guard let fault = try? entry.rule.makeFault() else { continue }
            let startAt = entry.rule.trigger.earliestStart(openedAt: openedAt, proxyStart: engine.proxyStart)
            var instance = Instance(id: entry.id, rule: entry.rule, fault: fault, random: SeededGenerator(seed: engine.seed),
                                    phase: .undecided, immediate: false, startAt: startAt, eventSeen: false)
            decideScope(&instance)
            instances.append(instance)
        }
        for rule in engine.takePending(conn) {
            guard let fault = try? rule.makeFault() else { continue }
            applyCount += 1
            // Start conditions count from now: `after=3s` fires 3 s after the rule was applied.
            let trigger = rule.trigger
            let startAt = max(now.addingClamped(trigger.after ?? 0), trigger.at.map { engine.proxyStart.addingClamped($0) } ?? now)
            instances.append(Instance(id: nil, rule: rule, fault: fault,
                                      random: SeededGenerator(seed: engine.seed, 0, UInt64(conn), applyCount),
                                      phase: .waiting, immediate: true, startAt: startAt,
                                      eventSeen: !trigger.waitsForEvent, framesBase: framesRelayed))
        }
        return armReady(now: now)
    }

    /// Whether an engine rule's instance applies to this connection (`conn=`, `every=`,
    /// `prob=`, `client=`): decided once the request was read and the connection has its
    /// ordinal and client key; left `.undecided` before.
    private func decideScope(_ instance: inout Instance) {
        guard instance.phase == .undecided, let ordinal, let clientKey, let id = instance.id else { return }
        let trigger = instance.rule.trigger
        instance.random = SeededGenerator(seed: engine.seed, UInt64(id), UInt64(ordinal))
        var phase: Phase = trigger.selects(connection: ordinal) ? .waiting : .outOfScope
        if phase == .waiting, let p = trigger.probability, instance.random.unit() >= p { phase = .outOfScope }
        if phase == .waiting, !trigger.matchesRequest(clientKey: clientKey, host: requestHost, path: requestPath) { phase = .outOfScope }
        instance.phase = phase
    }

    /// The client's upgrade request was read: the connection is numbered (probes that never
    /// send a request are not), `client=`, `host=` and `path=` scopes are decided, and
    /// refusals may act. `host` is the request's `Host` header, `path` its target.
    public mutating func upgradeRequested(clientKey: String, host: String? = nil, path: String? = nil,
                                          now: Micros) -> [FaultOutcome] {
        self.clientKey = clientKey
        requestHost = host
        requestPath = path
        if ordinal == nil { ordinal = engine.countRequest() }
        var outcomes = refresh(now: now)
        for index in instances.indices where instances[index].phase == .undecided {
            decideScope(&instances[index])
        }
        for index in instances.indices where type(of: instances[index].fault).actsAtUpgrade {
            guard instances[index].phase == .waiting, now >= instances[index].startAt else { continue }
            instances[index].phase = .armed
            if let outcome = deliver(.upgrade, to: index, now: now) { outcomes.append(outcome) }
        }
        return outcomes
    }

    /// The server accepted the upgrade and the 101 was relayed: faults may arm from now on.
    public mutating func websocketOpened(now: Micros) -> [FaultOutcome] {
        websocketOpen = true
        return refresh(now: now) + armReady(now: now)
    }

    /// A frame about to be relayed: the armed faults' combined decision.
    /// `wire` is the connection's protocol table entry, which the handshake faults ask.
    public mutating func judge(_ frame: FaultFrame, wire: (any WireProtocol)? = nil, now: Micros) -> FrameDecision {
        var decision = FrameDecision()
        var frame = frame
        for index in instances.indices where instances[index].phase == .armed {
            var context = FaultContext(now: now, random: instances[index].random, wire: wire)
            let verdict = instances[index].fault.apply(.frame(frame), context: &context)
            instances[index].random = context.random
            if let wakeup = verdict.wakeup { instances[index].wakeup = wakeup }
            if let outcome = outcome(of: verdict, instance: instances[index]) { decision.outcomes.append(outcome) }
            switch verdict.frame {
            case .pass: continue
            case .drop: decision.dropped = true
            case .delay(let amount): decision.delay += amount
            case .rewrite(let payload):
                decision.rewritten = payload
                frame.payload = payload
            case .fragment(let count): decision.fragments = count
            case .slice(let pieces, let gap): decision.slices = (pieces, gap)
            }
            if decision.rule == nil { decision.rule = instances[index].rule.text }
            if decision.dropped { break }
        }
        return decision
    }

    /// `side`'s stream ended: whether an armed fault swallows the news (`dropped`).
    public mutating func judgeEnd(from side: Side, now: Micros) -> FrameDecision {
        var decision = FrameDecision()
        for index in instances.indices where instances[index].phase == .armed {
            var context = FaultContext(now: now, random: instances[index].random)
            let verdict = instances[index].fault.apply(.streamEnded(from: side), context: &context)
            instances[index].random = context.random
            if let outcome = outcome(of: verdict, instance: instances[index]) { decision.outcomes.append(outcome) }
            if verdict.frame == .drop, !decision.dropped {
                decision.dropped = true
                decision.rule = instances[index].rule.text
            } else if case .delay(let amount) = verdict.frame {
                decision.delay = max(decision.delay, amount)
                if decision.rule == nil { decision.rule = instances[index].rule.text }
            }
        }
        return decision
    }

    /// A frame was relayed (or deliberately dropped): counts it for `frames=` and notes its
    /// event for `on=` and `on-kind=`, then arms what became ready.
    public mutating func frameSeen(event: RealtimeEvent?, now: Micros) -> [FaultOutcome] {
        framesRelayed += 1
        if let event {
            for index in instances.indices where instances[index].rule.trigger.startsOn(event) {
                instances[index].eventSeen = true
            }
        }
        return refresh(now: now) + armReady(now: now)
    }

    /// Time passed: arms rules whose start came and wakes faults that asked for it.
    public mutating func tick(now: Micros) -> [FaultOutcome] {
        var outcomes = refresh(now: now) + armReady(now: now)
        for index in instances.indices where instances[index].phase == .armed {
            guard let wakeup = instances[index].wakeup, wakeup <= now else { continue }
            instances[index].wakeup = nil
            if let outcome = deliver(.timer, to: index, now: now) { outcomes.append(outcome) }
        }
        for index in instances.indices where instances[index].phase == .armed {
            guard let end = instances[index].expiresAt, end <= now else { continue }
            outcomes.append(expire(index, now: now))
        }
        return outcomes
    }

    /// `for=` ran out: the fault's last word (or a plain "over" report), then no more events.
    mutating func expire(_ index: Int, now: Micros) -> FaultOutcome {
        let rule = instances[index].rule
        var outcome = deliver(.expired, to: index, now: now)
            ?? FaultOutcome(rule: rule.text, kind: rule.kind, report: nil, target: nil, effects: [])
        if outcome.report == nil {
            let span = rule.trigger.duration.map(FaultDuration.format) ?? ""
            outcome.report = "\(rule.kind) over after \(span): normal service again"
        }
        instances[index].phase = .over
        instances[index].wakeup = nil
        instances[index].expiresAt = nil
        return outcome
    }

    // MARK: Arming

    mutating func armReady(now: Micros) -> [FaultOutcome] {
        guard websocketOpen else { return [] }
        var outcomes: [FaultOutcome] = []
        for index in instances.indices where instances[index].phase == .waiting {
            let instance = instances[index]
            if type(of: instance.fault).actsAtUpgrade { continue }
            guard now >= instance.startAt, frameConditionsMet(instance) else { continue }
            instances[index].phase = .armed
            if let outcome = deliver(.armed, to: index, now: now) { outcomes.append(outcome) }
        }
        return outcomes
    }

    func frameConditionsMet(_ instance: Instance) -> Bool {
        let trigger = instance.rule.trigger
        return (!trigger.waitsForEvent || instance.eventSeen) && framesRelayed - instance.framesBase >= (trigger.frames ?? 0)
    }

    mutating func deliver(_ event: FaultEvent, to index: Int, now: Micros) -> FaultOutcome? {
        var context = FaultContext(now: now, random: instances[index].random)
        let verdict = instances[index].fault.apply(event, context: &context)
        instances[index].random = context.random
        if let wakeup = verdict.wakeup { instances[index].wakeup = wakeup }
        if event == .armed || event == .upgrade {
            engine.countFiring(kind: instances[index].rule.kind, rule: instances[index].id)
            if let span = instances[index].rule.trigger.duration { instances[index].expiresAt = now.addingClamped(span) }
        }
        return outcome(of: verdict, instance: instances[index])
    }

    func outcome(of verdict: FaultVerdict, instance: Instance) -> FaultOutcome? {
        guard verdict.report != nil || !verdict.effects.isEmpty else { return nil }
        return FaultOutcome(rule: instance.rule.text, kind: instance.rule.kind, report: verdict.report,
                            target: verdict.target, effects: verdict.effects)
    }
}

extension Micros {
    /// `self + other`, held at the largest value instead of overflowing (times from rules).
    func addingClamped(_ other: Micros) -> Micros {
        let (sum, overflow) = addingReportingOverflow(other)
        return overflow ? (other > 0 ? .max : .min) : sum
    }
}
