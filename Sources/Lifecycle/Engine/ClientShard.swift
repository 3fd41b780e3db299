import Capture
import Protocols
import Vocabulary

/// The timelines of some of the clients (those whose ordinal is `index` modulo `count`;
/// one shard holds them all), carrying out the router's steps for them. Clients never
/// share state, so shards run on separate threads and together find what one would.
public struct ClientShard: Sendable {
    public let index: Int
    public let count: Int
    private let options: AnalyzerOptions
    private let shortcuts: Bool
    /// The connection-level spec (`websocket`) for clients that speak no protocol events.
    private let fallback: LifecycleSpec?
    /// The rules of the spec and of the fallback, set up once for all clients.
    private let plan: RulePlan
    private let fallbackPlan: RulePlan?
    /// This shard's clients, by ordinal / count.
    private var clients: [ClientTimeline] = []
    /// Decodes the frames the router left to the shard, once the prefix is known.
    private var decoder: (any WireProtocol)?

    public init(options: AnalyzerOptions, index: Int = 0, count: Int = 1) {
        self.init(options: options, index: index, count: count, shortcuts: true)
    }

    init(options: AnalyzerOptions, index: Int, count: Int, shortcuts: Bool) {
        self.options = options
        self.index = index
        self.count = max(1, count)
        self.shortcuts = shortcuts
        let fallback = options.spec.events.decodesEvents ? try? SpecLoader.load("websocket") : nil
        self.fallback = fallback
        // One numbering of states for both specs: a client that falls back keeps its state.
        let states = StateTable(specs: [options.spec] + (fallback.map { [$0] } ?? []))
        self.plan = RulePlan(spec: options.spec, shortcuts: shortcuts, states: states)
        self.fallbackPlan = fallback.map { RulePlan(spec: $0, shortcuts: shortcuts, states: states) }
    }

    /// Whether the step's client belongs to this shard (`sweep` and `finish` belong to all).
    public func holds(_ step: RoutedStep) -> Bool {
        step.client.map { $0 % count == index } ?? true
    }

    /// Carries out a step (of this shard's clients only) and returns what it revealed:
    /// `apply(_:into:)` with a fresh array, for callers that keep no buffer.
    public mutating func apply(_ step: RoutedStep) -> [AnalysisEvent] {
        var events: [AnalysisEvent] = []
        apply(step, into: &events)
        return events
    }

    /// Carries out a step (of this shard's clients only), appending what it revealed to
    /// `events`: a caller that empties and reuses one buffer allocates nothing for the
    /// steps that reveal nothing, which are nearly all of them.
    public mutating func apply(_ step: RoutedStep, into events: inout [AnalysisEvent]) {
        switch step {
        case .sweep(let time):
            for i in clients.indices { clients[i].advance(to: time, into: &events) }
        case .newClient(_, let info):
            clients.append(timeline(for: info))
            events.append(.client(info))
            clients[clients.count - 1].start(into: &events)
        case .lateClient(_, let info, let open, let end):
            var timeline = timeline(for: info)
            events.append(.client(info))
            timeline.start(into: &events)
            events.append(.connection(open.conn, client: info.id))
            timeline.open(open, into: &events)
            timeline.finish(at: end, into: &events)
        case .open(let client, let open):
            let local = client / count
            events.append(.connection(open.conn, client: clients[local].info.id))
            clients[local].open(open, into: &events)
        case .upgrade(let client, let upgrade):
            clients[client / count].upgrade(upgrade, into: &events)
        case .frame(let client, let frame, let event):
            let decoded: RealtimeEvent?
            switch event {
            case .decoded(let event):
                decoded = event
            case .decode(let prefix):
                if decoder == nil { decoder = options.makeEntry(prefix: prefix) }
                decoded = decoder?.event(of: frame)
            }
            clients[client / count].frame(frame, event: decoded, into: &events)
        case .end(let client, let end):
            clients[client / count].end(end, into: &events)
        case .fault(let client, let fault):
            clients[client / count].fault(fault, into: &events)
        case .finish(let time):
            for i in clients.indices { clients[i].finish(at: time, into: &events) }
        }
    }

    /// A new client's timeline, on the shard's spec, plan and options.
    private func timeline(for info: ClientInfo) -> ClientTimeline {
        ClientTimeline(info: info, spec: options.spec, plan: plan, appSecret: options.appSecret,
                       shortcuts: shortcuts, fallback: fallback, fallbackPlan: fallbackPlan)
    }

    /// `apply(.finish(at:))` handing over each client's final events in turn, so that a
    /// capture of very many clients never holds all of them at once.
    public mutating func finish(at time: Micros, emit: ([AnalysisEvent]) -> Void) {
        var events: [AnalysisEvent] = []
        for i in clients.indices {
            events.removeAll(keepingCapacity: true)
            clients[i].finish(at: time, into: &events)
            emit(events)
        }
    }

    /// This shard's clients that showed none of the spec's protocol, with their ordinals.
    public var connectionLevelClients: [(ordinal: Int, id: String)] {
        clients.indices.filter { clients[$0].connectionLevel }.map { ($0 * count + index, clients[$0].info.id) }
    }

    /// This shard's clients, in order of first appearance.
    var clientInfos: [ClientInfo] { clients.map(\.info) }
}

/// A spec's rules as the engine runs them, set up once per spec and shared by its clients:
/// which rules have timers and, per step kind, which observe it. Built per client these
/// index arrays cost memory in proportion to the clients (about half a kilobyte each).
final class RulePlan: Sendable {
    let spec: LifecycleSpec
    /// The numbers of the spec's named states.
    let states: SpecStates
    let ruleTypes: [any LifecycleRule.Type]
    /// Indices of the rules with timer checks, the only ones `advance` asks.
    let timerRules: [Int]
    /// Per step kind (by bit position), the indices of the rules that observe it, in rule
    /// order: a step visits only these (`LifecycleRule.observes`).
    let observers: [[Int]]
    /// Whether some rule observes server frames without a protocol event: when none does
    /// (most specs), such a frame can be a plain receipt (`ClientTimeline.isPlainReceipt`),
    /// asked on nearly every record, so kept as one flag rather than looked up in `observers`.
    let observesServerOtherFrames: Bool

    /// `states`: the numbering shared with the other spec a client may switch to (by
    /// default, this spec's own).
    init(spec: LifecycleSpec, shortcuts: Bool, states: StateTable? = nil) {
        self.spec = spec
        self.states = SpecStates(spec, table: states ?? StateTable(specs: [spec]))
        let types = spec.rules.compactMap { RuleRegistry.type(for: $0) }
        ruleTypes = types
        timerRules = types.indices.filter { types[$0].hasTimers }
        observers = StepKinds.singles.map { kind in
            types.indices.filter { !shortcuts || types[$0].observes.contains(kind) }
        }
        observesServerOtherFrames = !observers[StepKinds.serverOtherFrame.rawValue.trailingZeroBitCount].isEmpty
    }

    /// A fresh instance of every rule, for one client.
    func makeRules() -> [any LifecycleRule] {
        ruleTypes.map { $0.init(spec: spec) }
    }
}
