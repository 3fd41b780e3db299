import Capture
import Lifecycle
import Vocabulary

/// The shard side of judging each client by its own pack: one lifecycle engine per spec
/// (`ClientShard`, through its public entry points), each holding the clients of its spec
/// under local numbers, so that the engine never holds clients of two specs. A client's
/// steps carry its spec (`SpecStep`); sweeps and the finish go to every engine.
///
/// `index` and `count` as for `ClientShard`: on several threads, this set holds the
/// clients whose ordinal is `index` modulo `count`.
struct SpecPerClientShards: Sendable {
    let specs: ClientSpecs
    let index: Int
    let count: Int
    /// Per spec: its engine, once a client of it came.
    private var shards: [ClientShard?]
    /// Per spec: whether `shards` holds its engine. Asked on every step instead of
    /// `shards[number] == nil`, which copied the whole engine out (and retained and
    /// released what it holds) per record.
    private var made: [Bool]
    /// Per spec: the ordinal of each of its local clients.
    private var ordinals: [[Int]]
    /// Per client this set holds (by ordinal / count): its local number in its spec's engine.
    private var local: [Int32] = []

    init(specs: ClientSpecs, index: Int = 0, count: Int = 1) {
        self.specs = specs
        self.index = index
        self.count = max(1, count)
        shards = Array(repeating: nil, count: specs.options.count)
        made = Array(repeating: false, count: specs.options.count)
        ordinals = Array(repeating: [], count: specs.options.count)
    }

    /// Carries out a step and returns what it revealed.
    mutating func apply(_ step: SpecStep) -> [AnalysisEvent] {
        var events: [AnalysisEvent] = []
        apply(step, into: &events)
        return events
    }

    /// Carries out a step, appending what it revealed to `events`. The step is taken (the
    /// sharded analysis moves each in rather than copying it), and its routed step moved on
    /// to its engine: switching over `step.step` copied the whole step (a frame's record
    /// and event) on every record.
    mutating func apply(_ step: consuming SpecStep, into events: inout [AnalysisEvent]) {
        var none: [[UInt8]]? = nil
        apply(step, into: &events, keepingPayloadsIn: &none)
    }

    /// `apply`, appending a frame's payload buffer to `spent` (when not nil) before the
    /// frame goes to its engine, for the sharded analysis to hand back (`SpentPayloads`).
    /// Taken from the frame as it is taken apart (`applyFrame`): reading it through the
    /// whole step copied the step, every reference in its record counted up and down.
    mutating func apply(_ step: consuming SpecStep, into events: inout [AnalysisEvent],
                        keepingPayloadsIn spent: inout [[UInt8]]?) {
        let spec = step.spec
        let routed = (consume step).step
        guard let number = spec else {
            for i in shards.indices where made[i] { shards[i]!.apply(routed, into: &events) }
            return
        }
        if !made[number] {
            shards[number] = ClientShard(options: specs.options[number])
            made[number] = true
        }
        switch routed {
        case .newClient(let ordinal, let info):
            let slot = ordinal / count
            if slot >= local.count { local += Array(repeating: -1, count: slot + 1 - local.count) }
            local[slot] = Int32(truncatingIfNeeded: ordinals[number].count)
            shards[number]!.apply(.newClient(ordinal: ordinals[number].count, info), into: &events)
            ordinals[number].append(ordinal)
        case .lateClient:
            // Opened and finished at once, kept by no engine: no local number.
            shards[number]!.apply(routed, into: &events)
        default:
            guard let client = routed.client, client / count < local.count, local[client / count] >= 0 else { return }
            let asClient = Int(local[client / count])
            if spent != nil, routed.isFrame {
                applyFrame(routed, spec: number, asClient: asClient, into: &events, keepingPayloadIn: &spent)
            } else {
                shards[number]!.apply(routed, asClient: asClient, into: &events)
            }
        }
    }

    private mutating func applyFrame(_ routed: consuming RoutedStep, spec number: Int, asClient: Int,
                                     into events: inout [AnalysisEvent], keepingPayloadIn spent: inout [[UInt8]]?) {
        switch consume routed {
        case .frame(let client, let frame, let event):
            if !frame.payload.isEmpty { spent?.append(frame.payload) }
            shards[number]!.apply(.frame(client: client, consume frame, consume event), asClient: asClient, into: &events)
        case let other:
            shards[number]!.apply(other, asClient: asClient, into: &events)
        }
    }

    /// The input's end: every engine's final checks, a client's events at a time.
    mutating func finish(at time: Micros, emit: ([AnalysisEvent]) -> Void) {
        for i in shards.indices where made[i] { shards[i]!.finish(at: time, emit: emit) }
    }

    /// Whether a client's subscribe or sign-in carried auth, in any spec's engine.
    var authSeen: Bool { shards.contains { $0?.authSeen == true } }

    /// The clients that showed none of their spec's protocol, with their ordinals and spec.
    var connectionLevelClients: [(ordinal: Int, id: String, spec: Int)] {
        shards.indices.flatMap { number in
            (shards[number]?.connectionLevelClients ?? []).map { (ordinals[number][$0.ordinal], $0.id, number) }
        }.sorted { $0.ordinal < $1.ordinal }
    }
}

extension RoutedStep {
    /// A frame's step (asked without binding its record, which would copy it).
    var isFrame: Bool {
        if case .frame = self { true } else { false }
    }
}
