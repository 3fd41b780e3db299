import Capture
import ProtocolTable
import Protocols
import Vocabulary

/// Settings of one analysis run.
public struct AnalyzerOptions: Sendable {
    public var spec: LifecycleSpec
    public var clientKey: ClientKeyMode
    /// `--protocol-prefix`; nil = the spec's, else detected from the first handshake.
    public var prefix: String?
    /// `--app-secret`: enables signature checks.
    public var appSecret: String?
    /// Put before client ids ("2/client-1") when several inputs share one report.
    public var clientIDPrefix: String
    /// The protocol table entry that decodes the messages; nil: the one the spec's
    /// `events` names in the standard table. Set for an entry another table holds (one a
    /// test or a pack registered).
    public var entry: ProtocolTable.Registration?

    public init(spec: LifecycleSpec, clientKey: ClientKeyMode = .standard, prefix: String? = nil, appSecret: String? = nil,
                clientIDPrefix: String = "") {
        self.spec = spec
        self.clientKey = clientKey
        self.prefix = prefix
        self.appSecret = appSecret
        self.clientIDPrefix = clientIDPrefix
    }

    /// A fresh instance of the entry that decodes the messages, in dialect `prefix`.
    public func makeEntry(prefix: String?) -> any WireProtocol {
        entry?.make(prefix) ?? ProtocolTable.standard.entry(for: spec.events.rawValue, prefix: prefix)
    }
}

/// The streaming timeline engine. Feed it records in time order; it returns transitions
/// and findings as they become known. It keeps per-client and per-open-connection state
/// only, so it runs on captures of any size and live inside the proxy.
/// Timer checks run on record times (and at `finish`), never on the wall clock.
/// It is the router (client grouping) and one shard holding every client, on one thread;
/// `analyze --jobs N` runs the same two parts with the clients spread over N shards.
public struct LiveAnalyzer: Sendable {
    public let options: AnalyzerOptions
    private var router: ClientRouter
    private var shard: ClientShard
    /// Reused between records: the steps of the record being fed.
    private var steps: [RoutedStep] = []

    public init(options: AnalyzerOptions) {
        self.init(options: options, shortcuts: true)
    }

    /// `shortcuts`: whether clients skip work that cannot find anything
    /// (`LifecycleRule.observes` and `quietUntil`): always, except in tests that check
    /// skipping changes nothing. `maxAwake`, `historyLimit`: which clients sleep
    /// (`ClientShard`); tests that make clients sleep after every step change them.
    init(options: AnalyzerOptions, shortcuts: Bool, maxAwake: Int = ClientShard.standardMaxAwake,
         historyLimit: Int = ClientShard.standardHistoryLimit) {
        self.options = options
        self.router = ClientRouter(options: options)
        self.shard = ClientShard(options: options, index: 0, count: 1, shortcuts: shortcuts, maxAwake: maxAwake,
                                 historyLimit: historyLimit)
    }

    /// Whether a client's subscribe or sign-in carried auth (`ClientShard.authSeen`).
    public var authSeen: Bool { shard.authSeen }

    /// One line per client that showed none of the spec's protocol and was analyzed at
    /// connection level: "client-3: no bird events seen; analyzed at connection level".
    public var notes: [String] {
        Self.notes(connectionLevel: shard.connectionLevelClients.map(\.id), options: options, prefix: prefix)
    }

    /// The notes of `notes` for the given client ids.
    public static func notes(connectionLevel ids: [String], options: AnalyzerOptions, prefix: String?) -> [String] {
        let name = options.prefix ?? options.spec.prefix ?? prefix ?? options.spec.name
        return ids.map { "\($0): no \(name) events seen; analyzed at connection level" }
    }

    /// The prefix in use (given or detected); nil until known.
    public var prefix: String? { router.prefix }

    /// Clients found so far, in order of first appearance.
    public var clientInfos: [ClientInfo] { shard.clientInfos }

    /// How many clients are asleep now (`ClientShard`), for tests.
    var sleepingClients: Int { shard.sleepingCount }

    /// Consumes one record and returns what it revealed (`feed(_:into:)` with a fresh array).
    public mutating func feed(_ record: consuming CaptureRecord) -> [AnalysisEvent] {
        var events: [AnalysisEvent] = []
        feed(consume record, into: &events)
        return events
    }

    /// Consumes one record and appends what it revealed to `events`, the caller's buffer:
    /// emptied and reused by the caller, it makes a record that reveals nothing (nearly
    /// every one) cost no allocation.
    /// The record is taken, as `SpecPerClientAnalyzer.feed` takes it.
    public mutating func feed(_ record: consuming CaptureRecord, into events: inout [AnalysisEvent]) {
        steps.removeAll(keepingCapacity: true)
        router.route(consume record, into: &steps)
        applySteps(into: &events)
    }

    /// Each routed step moved out of `steps` to the shard: `for step in steps` copied each
    /// (its record's references counted up and down) before the array's own was destroyed.
    private mutating func applySteps(into events: inout [AnalysisEvent]) {
        steps.reverse()
        while let step = steps.popLast() { shard.apply(step, into: &events) }
    }

    /// Runs every client's timer checks up to `time` (a live proxy calls this on its clock).
    public mutating func advance(to time: Micros) -> [AnalysisEvent] {
        var events: [AnalysisEvent] = []
        advance(to: time, into: &events)
        return events
    }

    /// `advance(to:)` appending to the caller's buffer.
    public mutating func advance(to time: Micros, into events: inout [AnalysisEvent]) {
        steps.removeAll(keepingCapacity: true)
        router.sweep(to: time, into: &steps)
        applySteps(into: &events)
    }

    /// The input ended at `time`: final timer checks, open connections end with the capture.
    public mutating func finish(at time: Micros? = nil) -> [AnalysisEvent] {
        var events: [AnalysisEvent] = []
        finish(at: time) { events += $0 }
        return events
    }

    /// `finish(at:)` handing over the events a step at a time: a capture cut short may
    /// leave very many connections to finish, whose events need not be held all at once.
    public mutating func finish(at time: Micros? = nil, emit: ([AnalysisEvent]) -> Void) {
        while let step = router.nextFinishStep(at: time) {
            if case .finish(let time) = step {
                shard.finish(at: time, emit: emit)
            } else {
                emit(shard.apply(step))
            }
        }
    }
}
