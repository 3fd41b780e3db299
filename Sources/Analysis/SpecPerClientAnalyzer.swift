import Capture
import Lifecycle
import Vocabulary

/// `LiveAnalyzer` with each client judged by its own pack (`ClientSpecs`): the routing
/// that detects each client's protocol and the engines of its specs, on one thread. Used
/// by `analyze` without `--spec` (and without a recorded spec) and by `proxy --live` and
/// `--ui` without `--spec`.
///
/// Events are handed on with the number of the step that revealed them and, for a new
/// client, its ordinal: a client's first steps wait for its detection, so events do not
/// come in the order of the records, and a `ReportBuilder` fed with these numbers
/// (`add(_:step:newClient:)`, then `merged`) puts clients and findings in their places.
public struct SpecPerClientAnalyzer: Sendable {
    public typealias Emit = (_ events: [AnalysisEvent], _ step: Int, _ newClient: Int?) -> Void

    private var routing: SpecPerClientRouting
    private var shards: SpecPerClientShards
    private var steps: [SpecStep] = []
    private var events: [AnalysisEvent] = []
    private var stepNumber: Int

    /// `firstStep`: where step numbers start (after an earlier input's, in one report).
    public init(specs: ClientSpecs, firstStep: Int = 0) {
        routing = SpecPerClientRouting(specs: specs)
        shards = SpecPerClientShards(specs: specs)
        stepNumber = firstStep
    }

    public var specs: ClientSpecs { routing.specs }

    /// Consumes one record and hands on what it revealed. The record is taken (a caller
    /// that keeps it passes a copy): borrowed, it was copied for the router and the
    /// caller's destroyed after, every record (callgrind: 1.9% of a 150 MB capture's
    /// analysis).
    public mutating func feed(_ record: consuming CaptureRecord, emit: Emit) {
        steps.removeAll(keepingCapacity: true)
        routing.route(consume record, into: &steps)
        carryOut(emit)
    }

    /// Runs every client's timer checks up to `time` (a live proxy calls this on its clock).
    public mutating func advance(to time: Micros, emit: Emit) {
        steps.removeAll(keepingCapacity: true)
        routing.sweep(to: time, into: &steps)
        carryOut(emit)
    }

    /// The input ended at `time`: undecided clients are decided, final timer checks run,
    /// and open connections end with the capture.
    public mutating func finish(at time: Micros?, emit: Emit) {
        while true {
            steps.removeAll(keepingCapacity: true)
            guard routing.finishStep(at: time, into: &steps) else { return }
            for step in steps {
                stepNumber += 1
                if case .finish(let end) = step.step {
                    let number = stepNumber
                    shards.finish(at: end) { emit($0, number, nil) }
                } else {
                    events.removeAll(keepingCapacity: true)
                    shards.apply(step, into: &events)
                    if !events.isEmpty { emit(events, stepNumber, step.step.newClientOrdinal) }
                }
            }
        }
    }

    /// Each step moved out of `steps` and on to its engine. `for step in steps` copied
    /// every step out of the array, and handing it on while its ordinal was still to be
    /// read copied it again: two copies and two destroys of each record (a retain and a
    /// release of each of its references), 6.5% of the instructions of a 150 MB capture's
    /// analysis (callgrind, docs/benchmarks.md). A record makes one step or two: the one
    /// `reverse` is a move of a value or two, no reference counted.
    private mutating func carryOut(_ emit: Emit) {
        steps.reverse()
        while let step = steps.popLast() {
            stepNumber += 1
            let ordinal = step.step.newClientOrdinal
            events.removeAll(keepingCapacity: true)
            shards.apply(consume step, into: &events)
            if !events.isEmpty { emit(events, stepNumber, ordinal) }
        }
    }

    /// Each client's spec number, by ordinal (0: the fallback).
    public var specNumbers: [Int16] { routing.specNumbers }

    /// Clients found so far.
    public var clientCount: Int { routing.clientCount }

    /// The number of the last step carried out.
    public var lastStep: Int { stepNumber }

    /// The prefix a report shows: the fallback spec's dialect, else the first learned.
    public var prefix: String? { routing.prefix }

    /// Whether a client's subscribe or sign-in carried auth (`ClientShard.authSeen`).
    public var authSeen: Bool { shards.authSeen }

    /// One line per client that showed none of its spec's protocol, as `LiveAnalyzer.notes`.
    public var notes: [String] { routing.notes(connectionLevel: shards.connectionLevelClients) }
}
