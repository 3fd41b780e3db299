import Capture
import Lifecycle
import Protocols
import Vocabulary

/// A routed step with the number of the spec that judges its client (`ClientSpecs`); nil
/// for the steps that concern every client (`sweep`, `finish`).
public struct SpecStep: Sendable {
    public var spec: Int?
    public var step: RoutedStep

    /// A step of an analysis with one spec (number 0).
    init(one step: RoutedStep) {
        self.init(spec: step.client == nil ? nil : 0, step: step)
    }

    init(spec: Int?, step: RoutedStep) {
        self.spec = spec
        self.step = step
    }
}

/// The router's side of judging each client by its own pack: connections are grouped into
/// clients as always (`ClientRouter`, which decodes nothing here), then each new client's
/// steps are held while its first upgrade request and first messages are offered to the
/// protocol table's detector (`EntryDetection`, as for a whole input). Once it decides,
/// the client's spec is fixed, its held steps go on in order, and every text frame of it
/// is decoded by that spec's entry (one instance per spec, learning its dialect): the
/// frame is decoded once, here until the entry's dialect is known, then by the client's
/// engine (its shard), as `ClientRouter` leaves it to the shards.
/// A held client misses the sweeps that pass while it waits; its timeline catches up on
/// its next step, as every step first advances the client's timers to its record's time.
///
/// Bounded: a client stays undecided for at most `heldLimit` steps, `heldBytes` of frame
/// payload and `patience` of record time (and no longer than its first connection, or
/// the input); then the fallback spec judges it. At most `pendingLimit` clients wait at
/// once; past that the oldest is decided on what it showed.
struct SpecPerClientRouting: Sendable {
    static let heldLimit = 64
    static let heldBytes = 1 << 20
    static let patience: Micros = 2_000_000
    static let pendingLimit = 4096

    let specs: ClientSpecs
    private var router: ClientRouter
    /// Per spec: the entry decoding its clients' frames (made when first needed).
    private var decoders: [(any WireProtocol)?]
    /// Per spec: its entry's dialect once known, from when on the shards decode its
    /// clients' frames (and this entry decodes none, so it learns no other). Kept apart so
    /// that a frame does not read the entry out of `decoders` (a copy of its state) to ask it.
    private var shardDialects: [String?]
    /// Per client ordinal: its spec number, or -1 while undecided.
    private var specOf: [Int16] = []
    private var pending: [Int: PendingClient] = [:]
    /// Reused between records: the router's steps for the record being routed.
    private var routed: [RoutedStep] = []

    private struct PendingClient {
        var detection: EntryDetection
        var held: [RoutedStep]
        var bytes = 0
        var since: Micros
    }

    init(specs: ClientSpecs) {
        self.specs = specs
        var options = specs.options[0]
        // The router only groups: each client's frames are decoded by its own spec's entry.
        options.entry = specs.table.registration(named: ConnectionLevelProtocol.key)
        router = ClientRouter(options: options)
        decoders = Array(repeating: nil, count: specs.options.count)
        shardDialects = Array(repeating: nil, count: specs.options.count)
    }

    var clientCount: Int { router.clientCount }

    /// The dialect spec `number`'s entry learned (Bird's prefix); nil when none yet.
    func prefix(of number: Int) -> String? { decoders[number]?.dialect }

    /// Each client's spec number, by ordinal (all decided once the input ended).
    var specNumbers: [Int16] { specOf }

    /// The prefix a report shows: the fallback spec's dialect, else the first learned.
    var prefix: String? {
        (0..<specs.options.count).lazy.compactMap { prefix(of: $0) }.first
    }

    /// One line per client that showed none of its spec's protocol, as `LiveAnalyzer.notes`
    /// words it for its spec.
    func notes(connectionLevel clients: [(ordinal: Int, id: String, spec: Int)]) -> [String] {
        clients.flatMap { client in
            LiveAnalyzer.notes(connectionLevel: [client.id], options: specs.options[client.spec], prefix: prefix(of: client.spec))
        }
    }

    mutating func route(_ record: consuming CaptureRecord, into out: inout [SpecStep]) {
        routed.removeAll(keepingCapacity: true)
        router.route(record, into: &routed)
        handleRouted(into: &out)
    }

    mutating func sweep(to time: Micros, into out: inout [SpecStep]) {
        routed.removeAll(keepingCapacity: true)
        router.sweep(to: time, into: &routed)
        handleRouted(into: &out)
    }

    /// The router's steps handed on in order, each moved out of `routed` rather than copied.
    private mutating func handleRouted(into out: inout [SpecStep]) {
        routed.reverse()
        while let step = routed.popLast() { handle(step, into: &out) }
    }

    /// The steps of the input's end, a router step at a time (see
    /// `ClientRouter.nextFinishStep`); false once the finish itself was handed on.
    mutating func finishStep(at time: Micros?, into out: inout [SpecStep]) -> Bool {
        guard let step = router.nextFinishStep(at: time) else { return false }
        handle(step, into: &out)
        return true
    }

    private mutating func handle(_ step: consuming RoutedStep, into out: inout [SpecStep]) {
        switch step {
        case .sweep(let time):
            // Clients undecided for too long are judged by what they showed.
            let outwaited = pending.filter { time - $0.value.since >= Self.patience }.keys.sorted()
            for client in outwaited { decide(client, into: &out) }
            out.append(SpecStep(spec: nil, step: step))
        case .finish:
            for client in pending.keys.sorted() { decide(client, into: &out) }
            out.append(SpecStep(spec: nil, step: step))
        case .newClient(let ordinal, let info):
            setSpec(-1, of: ordinal)
            if pending.count >= Self.pendingLimit, let oldest = pending.keys.min() { decide(oldest, into: &out) }
            pending[ordinal] = PendingClient(detection: EntryDetection(table: specs.table), held: [step], since: info.firstSeen)
        case .lateClient(let ordinal, _, _, _):
            // Nothing but its open was seen: nothing to detect by.
            setSpec(0, of: ordinal)
            out.append(SpecStep(spec: 0, step: step))
        default:
            guard let client = step.client, client < specOf.count else { return }
            let number = Int(specOf[client])
            if number < 0 {
                hold(step, of: client, into: &out)
            } else {
                // `consume`: else the step (a frame with its record) was copied here.
                out.append(SpecStep(spec: number, step: decoded(consume step, by: number)))
            }
        }
    }

    /// Holds a step of an undecided client, offering what it shows to its detection.
    private mutating func hold(_ step: RoutedStep, of client: Int, into out: inout [SpecStep]) {
        guard var waiting = pending.removeValue(forKey: client) else { return }
        waiting.held.append(step)
        var ended = false
        switch step {
        case .upgrade(_, let upgrade):
            waiting.detection.offer(.upgrade(upgrade))
            ended = upgrade.from == .server && upgrade.status != 101
        case .frame(_, let frame, _):
            waiting.bytes += frame.payload.count
            waiting.detection.offer(.frame(frame))
        case .end(_, let end):
            ended = end.seenByClient
        default:
            break
        }
        pending[client] = waiting
        if waiting.detection.decided || ended || waiting.held.count >= Self.heldLimit || waiting.bytes >= Self.heldBytes {
            decide(client, into: &out)
        }
    }

    /// Fixes the client's spec (the fallback when detection chose nothing) and hands on
    /// its held steps, in order.
    private mutating func decide(_ client: Int, into out: inout [SpecStep]) {
        guard let waiting = pending.removeValue(forKey: client) else { return }
        let number = specs.number(for: waiting.detection.choice)
        setSpec(number, of: client)
        for step in waiting.held { out.append(SpecStep(spec: number, step: decoded(step, by: number))) }
    }

    private mutating func setSpec(_ number: Int, of client: Int) {
        if client >= specOf.count { specOf += Array(repeating: -1, count: client + 1 - specOf.count) }
        specOf[client] = Int16(truncatingIfNeeded: number)
    }

    /// The step with its text frame's event decoded by spec `number`'s entry.
    /// The step is taken apart by `switch consume`: a `guard case` binding of its frame
    /// copied the record (a retain of each of its references) on every frame routed.
    private mutating func decoded(_ step: consuming RoutedStep, by number: Int) -> RoutedStep {
        switch consume step {
        case .frame(let client, let frame, let event):
            guard frame.opcode == .text else { return .frame(client: client, consume frame, consume event) }
            return decodedText(consume frame, of: client, by: number)
        case let other:
            return other
        }
    }

    /// (Each return moves `frame` into the step with an explicit `consume`: passed plainly,
    /// the record was copied, a retain of each of its references on the routing thread, then
    /// the parameter's copy released: 1.3-2.5% of `--jobs 2`'s samples on a capture.)
    private mutating func decodedText(_ frame: consuming FrameRecord, of client: Int, by number: Int) -> RoutedStep {
        if let dialect = shardDialects[number] { return .frame(client: client, consume frame, .decode(prefix: dialect)) }
        if decoders[number] == nil {
            let options = specs.options[number]
            decoders[number] = options.makeEntry(prefix: options.prefix ?? options.spec.prefix)
        }
        if let dialect = decoders[number]?.dialect {
            shardDialects[number] = dialect
            return .frame(client: client, consume frame, .decode(prefix: dialect))
        }
        let event = decoders[number]?.event(of: frame)
        return .frame(client: client, consume frame, .decodedByRouter(event))
    }
}
