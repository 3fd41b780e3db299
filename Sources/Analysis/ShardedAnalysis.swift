import Capture
import Foundation
import Lifecycle
import Reports
import Vocabulary

/// `analyze --jobs N`: the analysis with the clients spread over N worker threads. The
/// calling thread reads and routes the records (`ClientRouter`, the part that needs them
/// all in order); each worker owns the timelines of the clients whose ordinal is its index
/// modulo N (`ClientShard`) and collects their events in its own `ReportBuilder`. Every
/// finding carries the place one thread would have found it in, so the merged report is
/// byte for byte the one-thread report. Memory stays bounded: the steps in flight to a
/// worker are at most `queueDepth` batches of `batchSize`; the reader waits when a worker
/// falls behind.
public final class ShardedAnalysis {
    public let jobs: Int
    private var router: ClientRouter
    /// Each client judged by its own pack (`SpecPerClientRouting`): routes instead of `router`.
    private var perClientRouter: SpecPerClientRouting?
    /// `perClientRouter != nil`, asked once: comparing the optional with nil copies the
    /// router's whole state (a retain and a release of each of its tables) every record.
    private let routesPerClient: Bool
    private let workers: [ShardWorker]
    /// Steps routed but not yet handed to each worker, with their step numbers.
    private var batches: [[NumberedStep]]
    private var steps: [SpecStep] = []
    private var routed: [RoutedStep] = []
    private var stepNumber: Int
    /// The number of the last step routed.
    public var lastStep: Int { stepNumber }
    /// Clients found so far.
    public var clientCount: Int { perClientRouter?.clientCount ?? router.clientCount }
    /// Each client's spec number, by ordinal (with `perClient`; empty otherwise).
    public var specNumbers: [Int16] { perClientRouter?.specNumbers ?? [] }
    private var finished = false
    /// After `finish`: whether a client's subscribe or sign-in carried auth, on any worker
    /// (`ClientShard.authSeen`).
    public var authSeen: Bool { finished && workers.contains { $0.shard.authSeen } }
    static let batchSize = 1024
    static let queueDepth = 4

    /// Several inputs in one report: each later input's analysis starts its step numbers
    /// and client ordinals after the earlier ones' (`lastStep`, `clientCount`), so that
    /// `ReportBuilder.merged` puts its clients and findings after theirs.
    /// `perClient`: each client judged by the pack detected on it, from these specs.
    public init(options: AnalyzerOptions, jobs: Int, limits: ReportLimits = .standard,
                firstStep: Int = 0, firstOrdinal: Int = 0, perClient: ClientSpecs? = nil) {
        let jobs = max(1, jobs)
        self.jobs = jobs
        stepNumber = firstStep
        router = ClientRouter(options: options, decodeInShards: true)
        perClientRouter = perClient.map { SpecPerClientRouting(specs: $0, decodeInShards: true) }
        routesPerClient = perClient != nil
        let specs = perClient ?? ClientSpecs(only: options)
        workers = (0..<jobs).map { ShardWorker(shard: SpecPerClientShards(specs: specs, index: $0, count: jobs),
                                               limits: limits, depth: Self.queueDepth, firstOrdinal: firstOrdinal) }
        batches = Array(repeating: [], count: jobs)
        for worker in workers { worker.start() }
    }

    deinit {
        // An analysis abandoned on an input error: stop the workers.
        if !finished { for worker in workers { worker.close() } }
    }

    /// Routes one record to the workers of its client (every worker for a timer sweep).
    /// The record is taken, its parts moved into the steps (a caller that keeps it passes
    /// a copy).
    public func feed(_ record: consuming CaptureRecord) {
        steps.removeAll(keepingCapacity: true)
        if routesPerClient {
            perClientRouter!.route(record, into: &steps)
        } else {
            routed.removeAll(keepingCapacity: true)
            router.route(record, into: &routed)
            routed.reverse()
            while let step = routed.popLast() { steps.append(SpecStep(one: step)) }
        }
        dispatch()
    }

    /// The input ended at `time`: waits for every worker and returns the report's builder,
    /// the notes on clients analyzed at connection level, and the protocol prefix.
    public func finish(at time: Micros?) -> (builder: ReportBuilder, notes: [String], prefix: String?) {
        if routesPerClient {
            while true {
                steps.removeAll(keepingCapacity: true)
                guard perClientRouter!.finishStep(at: time, into: &steps) else { break }
                dispatch()
            }
        } else {
            router.finish(at: time) { step in
                steps.removeAll(keepingCapacity: true)
                steps.append(SpecStep(one: step))
                dispatch()
            }
        }
        for (i, worker) in workers.enumerated() {
            if !batches[i].isEmpty { worker.put(batches[i]) }
            batches[i] = []
            worker.close()
        }
        for worker in workers { worker.join() }
        finished = true
        let builder = ReportBuilder.merged(workers.map { $0.takeBuilder() })
        let clients = workers.flatMap(\.shard.connectionLevelClients).sorted { $0.ordinal < $1.ordinal }
        if let perClient = perClientRouter {
            return (builder, perClient.notes(connectionLevel: clients), perClient.prefix)
        }
        let notes = LiveAnalyzer.notes(connectionLevel: clients.map(\.id), options: router.options, prefix: router.prefix)
        return (builder, notes, router.prefix)
    }

    /// Hands `steps` to the batches, each moved out (not copied: a copy would count every
    /// reference in its record up and down again on this thread, the one all wait on).
    private func dispatch() {
        steps.reverse()
        while let step = steps.popLast() {
            stepNumber += 1
            if let client = step.step.client {
                let i = client % jobs
                batches[i].append(NumberedStep(number: stepNumber, step: step))
                if batches[i].count >= Self.batchSize { flush(i) }
            } else {
                for i in workers.indices {
                    batches[i].append(NumberedStep(number: stepNumber, step: step))
                    if batches[i].count >= Self.batchSize { flush(i) }
                }
            }
        }
    }

    private func flush(_ i: Int) {
        workers[i].put(batches[i])
        batches[i] = []
        batches[i].reserveCapacity(Self.batchSize)
    }
}

struct NumberedStep: Sendable {
    var number: Int
    var step: SpecStep
}

/// One worker thread and its bounded queue of batches. The shard and builder are touched
/// by the worker thread only, until `join` returns.
final class ShardWorker: @unchecked Sendable {
    private(set) var shard: SpecPerClientShards
    private(set) var builder: ReportBuilder
    private let depth: Int
    private let firstOrdinal: Int
    private let condition = NSCondition()
    private var queue: [[NumberedStep]] = []
    private var closed = false
    private var done = false

    init(shard: SpecPerClientShards, limits: ReportLimits, depth: Int, firstOrdinal: Int) {
        self.shard = shard
        self.firstOrdinal = firstOrdinal
        self.builder = ReportBuilder(limits: limits)
        self.depth = depth
    }

    func start() {
        let thread = Thread { [self] in run() }
        thread.stackSize = 8 << 20
        thread.start()
    }

    /// Hands a batch to the worker, waiting while its queue is full.
    func put(_ batch: [NumberedStep]) {
        condition.lock()
        while queue.count >= depth && !done { condition.wait() }
        queue.append(batch)
        condition.broadcast()
        condition.unlock()
    }

    /// No more batches: the worker ends once its queue is empty.
    func close() {
        condition.lock()
        closed = true
        condition.broadcast()
        condition.unlock()
    }

    /// The worker's builder, handed over (after `join`): the worker keeps an empty one.
    func takeBuilder() -> ReportBuilder {
        let taken = builder
        builder = ReportBuilder(limits: builder.limits)
        return taken
    }

    /// Waits until the worker thread has ended.
    func join() {
        condition.lock()
        while !done { condition.wait() }
        condition.unlock()
    }

    private func take() -> [NumberedStep]? {
        condition.lock()
        defer { condition.unlock() }
        while queue.isEmpty && !closed { condition.wait() }
        guard !queue.isEmpty else { return nil }
        let batch = queue.removeFirst()
        condition.broadcast()
        return batch
    }

    private func run() {
        while var batch = take() {
            // Each step moved out of the batch, last first, rather than copied.
            batch.reverse()
            while let numbered = batch.popLast() {
                if case .finish(let time) = numbered.step.step {
                    shard.finish(at: time) { builder.add($0, step: numbered.number) }
                    continue
                }
                let events = shard.apply(numbered.step)
                guard !events.isEmpty else { continue }
                if let ordinal = numbered.step.step.newClientOrdinal {
                    builder.add(events, step: numbered.number, newClient: firstOrdinal + ordinal)
                } else {
                    builder.add(events, step: numbered.number)
                }
            }
        }
        condition.lock()
        done = true
        condition.broadcast()
        condition.unlock()
    }
}
