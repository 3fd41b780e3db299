import Capture
import Protocols
import Vocabulary

/// The timelines of some of the clients (those whose ordinal is `index` modulo `count`;
/// one shard holds them all), carrying out the router's steps for them. Clients never
/// share state, so shards run on separate threads and together find what one would.
///
/// Memory stays flat however many clients an input holds: beyond `maxAwake` timelines,
/// the least recently active clients whose story is still short (`historyLimit` inputs)
/// are put to sleep (`SleepingClient`: their records, about a tenth of a timeline) and
/// rebuilt when a record or a due timer concerns them again, or at the finish. A
/// finished client keeps only its info. Reports cannot tell: a rebuilt timeline is the
/// one put away.
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
    private var clients: [ClientSlot] = []
    /// Per client (as `clients`): a sweep up to this record time can change nothing for it
    /// (`sweepDeadline`), so the once-a-second sweep visits only the clients past theirs,
    /// never touching the others' timelines. Kept after every input, sweep, sleep, wake
    /// and finish of the client; lower than need be is always safe (a visit that finds
    /// nothing due), so a client whose deadline cannot be had cheaply keeps `Micros.min`.
    private var sweepAfter: [Micros] = []
    /// The timelines of the awake clients: first those that can never sleep (their story
    /// grew too long), then the candidates, among which the clock hand turns.
    private var awake: [AwakeClient] = []
    private var neverSleep = 0
    private var hand = 0
    /// How many timelines stay awake before the least recently active are put to sleep.
    let maxAwake: Int
    /// Decodes the frames the router left to the shard, once the prefix is known.
    private var decoder: (any WireProtocol)?
    /// Reused by every wake-up: the events a rebuilt timeline makes again, thrown away.
    private var replayed: [AnalysisEvent] = []
    /// Whether a client's subscribe or sign-in carried auth, as decoded for its timeline:
    /// without one, the rules that verify auth had nothing to check (`RuleRegistry.unchecked`).
    public private(set) var authSeen = false

    /// Inputs a client may have taken and still be put to sleep: past them it stays awake.
    let historyLimit: Int
    static let standardHistoryLimit = 8
    /// The default `maxAwake`: about 20 MB of timelines, and more clients than a QA
    /// session or the 2,000-client benchmark holds at once, which therefore never sleep.
    static let standardMaxAwake = 4096

    public init(options: AnalyzerOptions, index: Int = 0, count: Int = 1) {
        self.init(options: options, index: index, count: count, shortcuts: true)
    }

    /// `maxAwake` and `historyLimit` other than the defaults: tests that make clients sleep
    /// after every step, whatever their story.
    init(options: AnalyzerOptions, index: Int, count: Int, shortcuts: Bool, maxAwake: Int = ClientShard.standardMaxAwake,
         historyLimit: Int = ClientShard.standardHistoryLimit) {
        self.options = options
        self.index = index
        self.count = max(1, count)
        self.shortcuts = shortcuts
        self.maxAwake = max(0, maxAwake)
        self.historyLimit = max(0, historyLimit)
        let fallback = options.spec.events.decodesEvents ? try? SpecLoader.load("websocket") : nil
        self.fallback = fallback
        // One numbering of states for both specs: a client that falls back keeps its state.
        let states = StateTable(specs: [options.spec] + (fallback.map { [$0] } ?? []))
        self.plan = RulePlan(spec: options.spec, shortcuts: shortcuts, states: states,
                             entry: options.makeEntry(prefix: options.prefix ?? options.spec.prefix))
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
    public mutating func apply(_ step: consuming RoutedStep, into events: inout [AnalysisEvent]) {
        let local = step.client.map { $0 / count }
        apply(step, local: local, into: &events)
    }

    /// `apply(_:into:)` for a step of this shard's client numbered `local` (its place in the
    /// shard, whatever number the step carries): an owner that numbers the clients of this
    /// engine apart from the router (one engine per spec) hands a step over as it came,
    /// instead of rebuilding it around another number, a copy of its record per frame.
    public mutating func apply(_ step: consuming RoutedStep, asClient local: Int, into events: inout [AnalysisEvent]) {
        let local = step.client == nil ? nil : local
        apply(step, local: local, into: &events)
    }

    /// `local`: the client's place in `clients` (nil for the steps of every client). The
    /// step is taken apart, not copied: binding a borrowed frame step's record and event
    /// copied both (and retained what they hold) on every frame.
    private mutating func apply(_ step: consuming RoutedStep, local: Int?, into events: inout [AnalysisEvent]) {
        switch consume step {
        case .sweep(let time):
            // `where` reads the deadlines as the loop reaches them: a client put to sleep by
            // an earlier one's sweep is judged by its sleeping deadline, as the visit would.
            for local in sweepAfter.indices where time > sweepAfter[local] { sweep(local, to: time, into: &events) }
        case .newClient(_, let info):
            let timeline = timeline(for: info)
            events.append(.client(info))
            timeline.start(into: &events)
            clients.append(.awake(awake.count))
            sweepAfter.append(Micros.min)  // (a new timeline asks its timer rules at the first sweep)
            awake.append(AwakeClient(timeline: timeline, local: clients.count - 1, history: shortcuts ? [] : nil))
            if !shortcuts { keepAwake(awake.count - 1) }
            sleepIfCrowded()
        case .lateClient(_, let info, let open, let end):
            var timeline = timeline(for: info)
            events.append(.client(info))
            timeline.start(into: &events)
            events.append(.connection(open.conn, client: info.id))
            timeline.open(open, into: &events)
            timeline.finish(at: end, into: &events)
        case .open(_, let open):
            guard let local else { return }
            events.append(.connection(open.conn, client: clients[local].info(in: awake).id))
            take(.open(open), client: local, into: &events)
        case .upgrade(_, let upgrade):
            guard let local else { return }
            take(.upgrade(upgrade), client: local, into: &events)
        case .frame(_, let frame, let event):
            guard let local else { return }
            let decoded: RealtimeEvent?
            // `consume`: binding the borrowed event's payload copied the decoded event
            // (a retain of each of its strings) on every frame (callgrind: 2% of a 150 MB
            // capture's analysis).
            switch consume event {
            case .none:
                decoded = nil
            case .decoded(let event):
                decoded = event
            case .decode(let prefix):
                // The entry moved out and back: through `decoder?.` its optional was copied and
                // destroyed, and the event copied, on every frame.
                var entry = decoder.take() ?? options.makeEntry(prefix: prefix)
                decoded = entry.event(of: frame)
                decoder = consume entry
            }
            if !authSeen, frame.from == .client, let decoded, decoded.kind == .subscribe || decoded.kind == .signin {
                authSeen = decoded.auth != nil
            }
            takeFrame(consume frame, consume decoded, client: local, into: &events)
        case .end(_, let end):
            guard let local else { return }
            take(.end(end), client: local, into: &events)
        case .fault(_, let fault):
            guard let local else { return }
            take(.fault(fault), client: local, into: &events)
        case .finish(let time):
            for local in clients.indices { finish(local, at: time, into: &events) }
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
        for local in clients.indices {
            events.removeAll(keepingCapacity: true)
            finish(local, at: time, into: &events)
            emit(events)
        }
    }

    /// This shard's clients that showed none of the spec's protocol, with their ordinals.
    public var connectionLevelClients: [(ordinal: Int, id: String)] {
        clients.indices.filter { clients[$0].connectionLevel(in: awake) }
            .map { ($0 * count + index, clients[$0].info(in: awake).id) }
    }

    /// This shard's clients, in order of first appearance.
    var clientInfos: [ClientInfo] { clients.map { $0.info(in: awake) } }

    /// How many clients are asleep now (for tests).
    var sleepingCount: Int {
        clients.reduce(0) { count, slot in if case .asleep = slot { count + 1 } else { count } }
    }

    // MARK: sleep and wake

    /// The input handed to client `local`'s timeline, and kept while its story is short.
    private mutating func take(_ input: ClientInput, client local: Int, into events: inout [AnalysisEvent]) {
        guard let i = wake(local) else { return }
        take(input, awake: i, into: &events)
    }

    /// `take` for the awake client at `i` in `awake`.
    private mutating func take(_ input: ClientInput, awake i: Int, into events: inout [AnalysisEvent]) {
        awake[i].recent = true
        if awake[i].history != nil {
            if awake[i].history!.count < historyLimit { awake[i].history!.append(input) } else { awake[i].history = nil }
        }
        awake[i].timeline.take(input, into: &events)
        noteSweepDeadline(ofAwake: i)
        if awake[i].history == nil { keepAwake(i) }  // (which moves it in `awake`)
        sleepIfCrowded()
    }

    /// `take(.frame(frame, event))`, the input made only while the client's story is kept:
    /// a frame is nearly every record, and wrapping it in an input copied the whole record
    /// (and its event) once more per frame, to be thrown away for nearly every client.
    private mutating func takeFrame(_ frame: consuming FrameRecord, _ event: consuming RealtimeEvent?, client local: Int,
                                    into events: inout [AnalysisEvent]) {
        guard let i = wake(local) else { return }
        guard awake[i].history == nil else { return take(.frame(frame, event), awake: i, into: &events) }
        awake[i].recent = true
        awake[i].timeline.frame(consume frame, event: consume event, into: &events)
        noteSweepDeadline(ofAwake: i)
        keepAwake(i)  // (which moves it in `awake`)
        sleepIfCrowded()
    }

    /// A sweep of client `local`'s timers: an awake client's timeline advances (kept in its
    /// story when a timer could act, `wakeTime`); a sleeping one wakes only if due.
    private mutating func sweep(_ local: Int, to time: Micros, into events: inout [AnalysisEvent]) {
        switch clients[local] {
        case .awake(let i):
            if awake[i].history != nil, time > awake[i].timeline.wakeTime {
                take(.advance(time), client: local, into: &events)
            } else {
                awake[i].timeline.advance(to: time, into: &events)
                noteSweepDeadline(ofAwake: i)
            }
        case .asleep(let sleeper) where time > sleeper.wake:
            take(.advance(time), client: local, into: &events)
        case .asleep, .finished:
            break
        }
    }

    /// Client `local`'s final checks; its timeline is not kept after them.
    private mutating func finish(_ local: Int, at time: Micros, into events: inout [AnalysisEvent]) {
        guard let i = wake(local) else { return }
        awake[i].timeline.finish(at: time, into: &events)
        let finished = ClientSlot.finished(awake[i].timeline.info, connectionLevel: awake[i].timeline.connectionLevel)
        removeAwake(at: i)
        clients[local] = finished
        sweepAfter[local] = Micros.max
    }

    /// The place in `awake` of client `local`, its timeline rebuilt first if it slept; nil
    /// for a finished client.
    private mutating func wake(_ local: Int) -> Int? {
        switch clients[local] {
        case .awake(let i):
            return i
        case .finished:
            return nil
        case .asleep(let sleeper):
            var timeline = timeline(for: sleeper.info)
            let inputs = sleeper.inputs
            for input in inputs {
                timeline.take(input, into: &replayed)
                replayed.removeAll(keepingCapacity: true)
            }
            clients[local] = .awake(awake.count)
            awake.append(AwakeClient(timeline: timeline, local: local, history: inputs))
            return awake.count - 1
        }
    }

    /// Over `maxAwake` timelines: the clock hand turns over the candidates, giving each
    /// active one a second chance, and puts the others to sleep until few enough are awake.
    private mutating func sleepIfCrowded() {
        var looked = 0
        while awake.count > maxAwake, awake.count > neverSleep, looked <= 2 * (awake.count - neverSleep) {
            if hand < neverSleep || hand >= awake.count { hand = neverSleep }
            if awake[hand].recent {
                awake[hand].recent = false
                hand += 1
                looked += 1
            } else if let history = awake[hand].history, let sleeper = SleepingClient(awake[hand].timeline, inputs: history) {
                let local = awake[hand].local
                removeAwake(at: hand)
                clients[local] = .asleep(sleeper)
                sweepAfter[local] = sleeper.wake
                looked = 0
            } else {
                // Its story is too long, or a record would not come back from its line.
                awake[hand].history = nil
                keepAwake(hand)
            }
        }
    }

    /// Keeps the sweep deadline of the awake client at `i`: its timeline's own
    /// (`ClientTimeline.sweepDeadline`) once it can never sleep; while its story is kept,
    /// `Micros.min`, since a sweep past the (costlier to ask) `wakeTime` of such a client
    /// joins its story even when it finds nothing.
    private mutating func noteSweepDeadline(ofAwake i: Int) {
        sweepAfter[awake[i].local] = awake[i].history == nil ? awake[i].timeline.sweepDeadline : Micros.min
    }

    /// The awake client at `i` can never sleep: it joins the front of `awake`.
    private mutating func keepAwake(_ i: Int) {
        guard i >= neverSleep else { return }
        swapAwake(i, neverSleep)
        neverSleep += 1
    }

    /// Takes the timeline at `i` out of `awake` (the caller then says where its client stands).
    private mutating func removeAwake(at i: Int) {
        var i = i
        if i < neverSleep {
            neverSleep -= 1
            swapAwake(i, neverSleep)
            i = neverSleep
        }
        swapAwake(i, awake.count - 1)
        awake.removeLast()
    }

    private mutating func swapAwake(_ a: Int, _ b: Int) {
        guard a != b else { return }
        awake.swapAt(a, b)
        clients[awake[a].local] = .awake(a)
        clients[awake[b].local] = .awake(b)
    }
}

/// Where one client of a shard stands.
private enum ClientSlot: Sendable {
    /// Its timeline is in the shard's `awake`, at this place.
    case awake(Int)
    case asleep(SleepingClient)
    /// Its final checks are done: only what the shard reports about it stays.
    case finished(ClientInfo, connectionLevel: Bool)

    func info(in awake: [AwakeClient]) -> ClientInfo {
        switch self {
        case .awake(let i): awake[i].timeline.info
        case .asleep(let sleeper): sleeper.info
        case .finished(let info, _): info
        }
    }

    func connectionLevel(in awake: [AwakeClient]) -> Bool {
        switch self {
        case .awake(let i): awake[i].timeline.connectionLevel
        case .asleep(let sleeper): sleeper.connectionLevel
        case .finished(_, let connectionLevel): connectionLevel
        }
    }
}

/// An awake client: its timeline and, while its story is short enough to sleep, its inputs.
private struct AwakeClient: Sendable {
    var timeline: ClientTimeline
    /// Its place in the shard's clients.
    var local: Int
    /// Its inputs so far; nil once past `historyLimit` (it never sleeps then).
    var history: [ClientInput]?
    /// It took an input since the clock hand last passed.
    var recent = true
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

    /// The protocol table entry the clients are judged with, handed to every rule
    /// (`LifecycleRule.init(spec:entry:)`).
    let entry: any WireProtocol

    /// `states`: the numbering shared with the other spec a client may switch to (by
    /// default, this spec's own). `entry`: by default, the one the spec's `events` names.
    init(spec: LifecycleSpec, shortcuts: Bool, states: StateTable? = nil, entry: (any WireProtocol)? = nil) {
        self.spec = spec
        self.entry = entry ?? AnalyzerOptions(spec: spec).makeEntry(prefix: spec.prefix)
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
        ruleTypes.map { $0.init(spec: spec, entry: entry) }
    }
}
