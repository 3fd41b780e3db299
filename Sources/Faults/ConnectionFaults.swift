import Capture
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
    /// The rule that touched the frame (the first, when several did), for its record.
    public var rule: String?
    /// Reports and effects raised while judging the frame.
    public var outcomes: [FaultOutcome] = []

    public static let untouched = FrameDecision()
}

/// The faults of one connection: decides, per rule, whether the connection is in scope and
/// when the trigger fires, then forwards events to the armed faults and gathers their
/// verdicts. Owned by the connection's `RelaySession`; pure apart from reading the shared
/// engine's rule list.
public struct ConnectionFaults: Sendable {
    enum Phase: Sendable { case undecided, outOfScope, waiting, armed }

    struct Instance: Sendable {
        /// Engine id, or nil for a rule applied to this connection only.
        var id: Int?
        var rule: FaultRule
        var fault: any Fault
        var random: SeededGenerator
        var phase: Phase
        /// Apply-now rules ignore start conditions.
        var immediate: Bool
        var startAt: Micros
        var eventSeen: Bool
        var wakeup: Micros?
    }

    public let engine: FaultEngine
    public let conn: ConnectionID
    /// The connection's ordinal within the proxy (1, 2, ...), for `conn=` and `every=`.
    public let ordinal: Int
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
        ordinal = engine.openConnection()
        _ = refresh(now: openedAt)
    }

    /// Whether any armed fault may care about event names (so frames are worth decoding).
    public var wantsEventNames: Bool { !instances.isEmpty }

    /// The earliest time something is due (a start condition, a fault's wake-up).
    public var nextWakeup: Micros? {
        instances.compactMap { instance -> Micros? in
            switch instance.phase {
            case .waiting where websocketOpen && !instance.immediate && frameConditionsMet(instance)
                && !type(of: instance.fault).actsAtUpgrade:
                return instance.startAt
            case .armed: return instance.wakeup
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
            let trigger = entry.rule.trigger
            var random = SeededGenerator(seed: engine.seed, UInt64(entry.id), UInt64(ordinal))
            var phase: Phase = trigger.selects(connection: ordinal) ? .waiting : .outOfScope
            if phase == .waiting, let p = trigger.probability, random.unit() >= p { phase = .outOfScope }
            if phase == .waiting, trigger.needsClientKey {
                phase = clientKey.map {
                    trigger.matchesRequest(clientKey: $0, host: requestHost, path: requestPath) ? .waiting : .outOfScope
                } ?? .undecided
            }
            let startAt = trigger.earliestStart(openedAt: openedAt, proxyStart: engine.proxyStart)
            instances.append(Instance(id: entry.id, rule: entry.rule, fault: fault, random: random, phase: phase,
                                      immediate: false, startAt: startAt, eventSeen: false))
        }
        for rule in engine.takePending(conn) {
            guard let fault = try? rule.makeFault() else { continue }
            applyCount += 1
            instances.append(Instance(id: nil, rule: rule, fault: fault,
                                      random: SeededGenerator(seed: engine.seed, 0, UInt64(conn), applyCount),
                                      phase: .waiting, immediate: true, startAt: now, eventSeen: true))
        }
        return armReady(now: now)
    }

    /// The client's upgrade request was read: decides `client=`, `host=` and `path=` scopes
    /// and lets refusals act. `host` is the request's `Host` header, `path` its target.
    public mutating func upgradeRequested(clientKey: String, host: String? = nil, path: String? = nil,
                                          now: Micros) -> [FaultOutcome] {
        self.clientKey = clientKey
        requestHost = host
        requestPath = path
        var outcomes = refresh(now: now)
        for index in instances.indices where instances[index].phase == .undecided {
            let trigger = instances[index].rule.trigger
            instances[index].phase = trigger.matchesRequest(clientKey: clientKey, host: host, path: path) ? .waiting : .outOfScope
        }
        for index in instances.indices where type(of: instances[index].fault).actsAtUpgrade {
            guard instances[index].phase == .waiting, instances[index].immediate || now >= instances[index].startAt else { continue }
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
    public mutating func judge(_ frame: FaultFrame, now: Micros) -> FrameDecision {
        var decision = FrameDecision()
        var frame = frame
        for index in instances.indices where instances[index].phase == .armed {
            var context = FaultContext(now: now, random: instances[index].random, prefixes: engine.prefixes)
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
            var context = FaultContext(now: now, random: instances[index].random, prefixes: engine.prefixes)
            let verdict = instances[index].fault.apply(.streamEnded(from: side), context: &context)
            instances[index].random = context.random
            if verdict.frame == .drop, !decision.dropped {
                decision.dropped = true
                decision.rule = instances[index].rule.text
            }
        }
        return decision
    }

    /// A frame was relayed (or deliberately dropped): counts it for `frames=` and notes its
    /// event for `on=`, then arms what became ready.
    public mutating func frameSeen(event: String?, now: Micros) -> [FaultOutcome] {
        framesRelayed += 1
        if let event {
            for index in instances.indices where instances[index].rule.trigger.onEvent == event {
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
        return outcomes
    }

    // MARK: Arming

    mutating func armReady(now: Micros) -> [FaultOutcome] {
        guard websocketOpen else { return [] }
        var outcomes: [FaultOutcome] = []
        for index in instances.indices where instances[index].phase == .waiting {
            let instance = instances[index]
            if type(of: instance.fault).actsAtUpgrade { continue }
            if !instance.immediate {
                guard now >= instance.startAt, frameConditionsMet(instance) else { continue }
            }
            instances[index].phase = .armed
            if let outcome = deliver(.armed, to: index, now: now) { outcomes.append(outcome) }
        }
        return outcomes
    }

    func frameConditionsMet(_ instance: Instance) -> Bool {
        let trigger = instance.rule.trigger
        return (trigger.onEvent == nil || instance.eventSeen) && framesRelayed >= (trigger.frames ?? 0)
    }

    mutating func deliver(_ event: FaultEvent, to index: Int, now: Micros) -> FaultOutcome? {
        var context = FaultContext(now: now, random: instances[index].random, prefixes: engine.prefixes)
        let verdict = instances[index].fault.apply(event, context: &context)
        instances[index].random = context.random
        if let wakeup = verdict.wakeup { instances[index].wakeup = wakeup }
        if event == .armed || event == .upgrade { engine.countFiring(kind: instances[index].rule.kind) }
        return outcome(of: verdict, instance: instances[index])
    }

    func outcome(of verdict: FaultVerdict, instance: Instance) -> FaultOutcome? {
        guard verdict.report != nil || !verdict.effects.isEmpty else { return nil }
        return FaultOutcome(rule: instance.rule.text, kind: instance.rule.kind, report: verdict.report,
                            target: verdict.target, effects: verdict.effects)
    }
}
