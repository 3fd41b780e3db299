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
/// falls behind. The batches (`StepBatch`) go back and forth between the reader and each
/// worker, each made once: at most `queueDepth + 2` per worker.
// The routing state below is `@exclusivity(unchecked)`: it is touched by the calling thread
// only (`feed`, `finish`), and each run-time access check (a thread-local access-set insert,
// 0.4% of a 50 MB capture's `--jobs 2` samples in `dispatch` alone) was a cost the
// one-thread analysis, whose router is a local value, does not pay.
public final class ShardedAnalysis {
    public let jobs: Int
    @exclusivity(unchecked) private var router: ClientRouter
    /// Each client judged by its own pack (`SpecPerClientRouting`): routes instead of `router`.
    @exclusivity(unchecked) private var perClientRouter: SpecPerClientRouting?
    /// `perClientRouter != nil`, asked once: comparing the optional with nil copies the
    /// router's whole state (a retain and a release of each of its tables) every record.
    private let routesPerClient: Bool
    private let workers: [ShardWorker]
    /// Steps routed but not yet handed to each worker, with their step numbers.
    @exclusivity(unchecked) private var batches: [StepBatch]
    @exclusivity(unchecked) private var steps: [SpecStep] = []
    @exclusivity(unchecked) private var routed: [RoutedStep] = []
    @exclusivity(unchecked) private var stepNumber: Int
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
    /// Steps per batch and batches queued per worker: at most `(queueDepth + 2) * batchSize`
    /// steps in flight per worker, each a record with its payload. At 1,024 and 4 that was
    /// some 12,000 steps with two workers, and with the runs in flight the reason
    /// `--jobs 2` peaked 8-9 MiB over `--jobs 1` at the end of a 1 GB capture's analysis
    /// (67.6 MiB); at 512 and 2 it peaked at 62.8 MiB (docs/benchmarks.md, "Issue 31's aims
    /// on the seventh round's merged code").
    static let batchSize = 512
    static let queueDepth = 2

    /// Several inputs in one report: each later input's analysis starts its step numbers
    /// and client ordinals after the earlier ones' (`lastStep`, `clientCount`), so that
    /// `ReportBuilder.merged` puts its clients and findings after theirs.
    /// `perClient`: each client judged by the pack detected on it, from these specs.
    /// `spentPayloads`: where the workers hand back each frame's payload once its step is
    /// done, for the capture reader's decode workers to free (`SpentPayloads`); nil frees
    /// them on the workers.
    public init(options: AnalyzerOptions, jobs: Int, limits: ReportLimits = .standard,
                firstStep: Int = 0, firstOrdinal: Int = 0, perClient: ClientSpecs? = nil,
                spentPayloads: SpentPayloads? = nil) {
        let jobs = max(1, jobs)
        self.jobs = jobs
        stepNumber = firstStep
        router = ClientRouter(options: options)
        perClientRouter = perClient.map { SpecPerClientRouting(specs: $0) }
        routesPerClient = perClient != nil
        let specs = perClient ?? ClientSpecs(only: options)
        workers = (0..<jobs).map { ShardWorker(shard: SpecPerClientShards(specs: specs, index: $0, count: jobs),
                                               limits: limits, depth: Self.queueDepth, firstOrdinal: firstOrdinal,
                                               spentPayloads: spentPayloads) }
        batches = workers.map { $0.emptyBatch() }
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
                // `consume`: without it the step was copied into the batch and the
                // original destroyed, a retain and a release of each of its references.
                batches[i].append(NumberedStep(number: stepNumber, step: consume step))
                if batches[i].isFull { flush(i) }
            } else {
                for i in workers.indices {
                    batches[i].append(NumberedStep(number: stepNumber, step: step))
                    if batches[i].isFull { flush(i) }
                }
            }
        }
    }

    private func flush(_ i: Int) {
        workers[i].put(batches[i])
        batches[i] = workers[i].emptyBatch()
    }
}

struct NumberedStep: Sendable {
    var number: Int
    var step: SpecStep
}

/// One worker thread, its bounded queue of batches and the batches it emptied, ready for
/// the router to fill again. The shard and builder are touched by the worker thread only,
/// until `join` returns.
// The shard and builder are marked `@exclusivity(unchecked)`, as the Pcap module's classes
// are: the worker mutates them once per step, and each run-time access check (a
// thread-local access-set insert) was a cost of the hand-off the one-thread analysis does
// not pay. Each is touched by one thread at a time (the worker's, then, after `join`, the
// caller's).
final class ShardWorker: @unchecked Sendable {
    @exclusivity(unchecked) private(set) var shard: SpecPerClientShards
    @exclusivity(unchecked) private(set) var builder: ReportBuilder
    private let depth: Int
    private let firstOrdinal: Int
    private let spentPayloads: SpentPayloads?
    private let condition = NSCondition()
    private var queue: [StepBatch] = []
    /// Batches emptied by the worker, for `emptyBatch`.
    private var spare: [StepBatch] = []
    private var closed = false
    private var done = false

    init(shard: SpecPerClientShards, limits: ReportLimits, depth: Int, firstOrdinal: Int,
         spentPayloads: SpentPayloads? = nil) {
        self.shard = shard
        self.firstOrdinal = firstOrdinal
        self.spentPayloads = spentPayloads
        self.builder = ReportBuilder(limits: limits)
        self.depth = depth
    }

    func start() {
        let thread = Thread { [self] in run() }
        thread.stackSize = 8 << 20
        thread.start()
    }

    /// A batch to fill: one the worker emptied, else a new one (so at most `depth + 2`
    /// exist: `depth` queued, one being emptied, one being filled).
    func emptyBatch() -> StepBatch {
        condition.lock()
        let reused = spare.popLast()
        condition.unlock()
        return reused ?? StepBatch(capacity: ShardedAnalysis.batchSize)
    }

    /// Hands a batch to the worker, waiting while its queue is full.
    func put(_ batch: StepBatch) {
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

    private func take(returning emptied: StepBatch?) -> StepBatch? {
        condition.lock()
        defer { condition.unlock() }
        if let emptied { spare.append(emptied) }
        while queue.isEmpty && !closed { condition.wait() }
        guard !queue.isEmpty else { return nil }
        let batch = queue.removeFirst()
        condition.broadcast()
        return batch
    }

    private func run() {
        var emptied: StepBatch?
        // One buffer for every step's events, emptied before each.
        var events: [AnalysisEvent] = []
        // The batch's frame payloads, kept past their steps and handed back together
        // (`spentPayloads`), so that they are freed on the thread that allocates the next.
        var spent: [[UInt8]]? = spentPayloads == nil ? nil : []
        spent?.reserveCapacity(ShardedAnalysis.batchSize)
        while let batch = take(returning: emptied) {
            // Each step moved out of the batch rather than copied.
            while let numbered = batch.takeNext() {
                let number = numbered.number
                // The step moved on to the shard (a plain pass copied it: its references
                // counted up and down once more per step).
                let step = (consume numbered).step
                if let time = step.step.finishTime {
                    shard.finish(at: time) { builder.add($0, step: number) }
                    continue
                }
                let ordinal = step.step.newClientOrdinal
                events.removeAll(keepingCapacity: true)
                shard.apply(consume step, into: &events, keepingPayloadsIn: &spent)
                guard !events.isEmpty else { continue }
                if let ordinal {
                    builder.add(events, step: number, newClient: firstOrdinal + ordinal)
                } else {
                    builder.add(events, step: number)
                }
            }
            emptied = batch
            if spent != nil { spentPayloads?.give(&spent!) }
        }
        condition.lock()
        done = true
        condition.broadcast()
        condition.unlock()
    }
}
