import CLI
import Capture
import Analysis
import Lifecycle
import ProtocolTable
import Reports
import Transport
import Vocabulary

/// `faultline proxy --spec NAME|FILE` (and `faultline demo`): the analyzer's streaming engine
/// run inside the proxy. Every record the proxy produces is fed to a `LiveAnalyzer` as it is
/// made, on the loop thread; a repeating 1 s timer advances the analyzer's clock so stale
/// checks fire on a quiet connection too. Transitions (with `--live`) and findings are
/// printed as they happen, in `LiveLine`'s wording; `finish` prints a summary. Only counts
/// are kept beside the analyzer's own per-client state, so a long session stays small (the
/// full report comes from `faultline analyze` on the recording).
///
/// Every method must be called on the loop's thread.
package final class LiveAnalysis {
    private var analyzer: LiveAnalyzer
    /// Without a spec given, once detection chose the fallback: each client judged by the
    /// pack detected on it (`SpecPerClientAnalyzer`), instead of `analyzer`.
    private var perClient: SpecPerClientAnalyzer?
    /// Without a spec given: the detection that chooses it, and the records held until it
    /// does (see `init(detecting:)`); nil once decided or when a spec was given.
    private var pending: PendingDetection?
    /// Totals for the summary line.
    package private(set) var clients = 0
    package private(set) var connections = 0
    package private(set) var errors = 0
    package private(set) var warnings = 0
    package private(set) var undetermined = 0
    /// The spec judging the clients: the one given, or the one detection chose (until it
    /// decides, the fallback spec, which nothing has been judged by yet).
    package private(set) var spec: LifecycleSpec
    /// Show transitions and new clients, not only findings and faults.
    package let transitions: Bool
    /// Where lines go: standard error by default, a closure in tests and the demo.
    package var emit: (String) -> Void = { Console.err($0 + "\n") }
    /// `proxy`: "+3.028000 client-1 ..." like the live view's record lines, times never
    /// going back; `demo`: "live: 3.028 s  client-1 ..." (the demo reformats these).
    package enum Style { case proxy, demo }
    package var style = Style.proxy
    /// The latest time shown, so lines stay in order: a finding found late (at a timer's
    /// deadline, seen on the next record) is shown at the time it was found, with its own
    /// time in the text.
    private var shownUntil: Micros = 0
    private var timer: TimerHandle?
    private var last: Micros = 0
    private var finished = false
    /// Sees each finding as it is made (the control API's event stream).
    package var onFinding: ((Finding) -> Void)?
    /// Sees every event the analyzer makes, with its clock (the web UI's model).
    package var onEvents: (([AnalysisEvent], Micros) -> Void)?

    package init(spec: LifecycleSpec, transitions: Bool) {
        self.spec = spec
        self.transitions = transitions
        analyzer = LiveAnalyzer(options: AnalyzerOptions(spec: spec))
    }

    /// No spec given: the spec is chosen as `analyze` chooses it on the capture, by the
    /// protocol table's detection on the first upgrade request and the first messages,
    /// and `load` makes it from the chosen spec's name (nil: keep `fallback`). Records wait
    /// until detection decides, at most `PendingDetection.recordLimit` of them and
    /// `byteLimit` bytes, or `patience` of record time; then the spec is chosen with
    /// what was seen, one line says which and why, and the held records are judged.
    package init(detecting fallback: LifecycleSpec, transitions: Bool, table: ProtocolTable = .standard,
                 load: @escaping (String) -> LifecycleSpec?) {
        self.spec = fallback
        self.transitions = transitions
        analyzer = LiveAnalyzer(options: AnalyzerOptions(spec: fallback))
        pending = PendingDetection(detection: EntryDetection(table: table), load: load)
    }

    /// Hooks into `server` (every record it produces) and starts the 1 s clock.
    package func attach(to server: ProxyServer) {
        server.recordObserver = { [unowned self] record in feed(record) }
        let hub = server.watchHub
        onFinding = { [unowned hub] finding in hub.publish(finding) }
        timer = server.loop.scheduleRepeating(every: 1_000_000) { [unowned self, unowned server] in
            advance(to: server.now)
        }
    }

    package func feed(_ record: CaptureRecord) {
        guard !finished else { return }
        if let t = record.time { last = max(last, t) }
        if pending != nil {
            guard pending!.hold(record, at: last) else { return }
            decide()
            return
        }
        let events = events(feeding: record)
        onEvents?(events, last)
        show(events)
    }

    /// What the record revealed, from the per-client analyzer once there is one.
    /// `perClient?.` mutates that analyzer in place; testing `perClient != nil` first copied
    /// it whole (every array in it retained and released) for each record, a few per cent
    /// of the proxy's CPU under `--live` (docs/benchmarks.md, "What `--live` costs the relay").
    private func events(feeding record: CaptureRecord) -> [AnalysisEvent] {
        var all: [AnalysisEvent] = []
        let fedPerClient: Void? = perClient?.feed(record) { events, _, _ in all += events }
        if fedPerClient == nil { analyzer.feed(record, into: &all) }
        return all
    }

    package func advance(to now: Micros) {
        guard !finished else { return }
        last = max(last, now)
        if let pending {
            guard pending.outwaited(at: now) else { return }
            decide()
        }
        var events: [AnalysisEvent] = []
        let advancedPerClient: Void? = perClient?.advance(to: now) { found, _, _ in events += found }
        if advancedPerClient == nil { analyzer.advance(to: now, into: &events) }
        onEvents?(events, last)
        show(events)
    }

    /// Stops the clock and runs the final timer checks (connections still open end with the
    /// session); then prints the summary line. Later records are ignored.
    package func finish(at time: Micros? = nil) {
        guard !finished else { return }
        timer?.cancel()
        timer = nil
        if pending != nil { decide() }
        let end = max(last, time ?? last)
        var events: [AnalysisEvent] = []
        let finishedPerClient: Void? = perClient?.finish(at: end) { found, _, _ in events += found }
        if finishedPerClient == nil { events = analyzer.finish(at: end) }
        show(events)
        finished = true
        emit("live analysis (spec \(spec.name)): \(summaryLine)")
    }

    package var summaryLine: String {
        "\(clients) client\(clients == 1 ? "" : "s"), \(connections) connection\(connections == 1 ? "" : "s"): "
            + "\(errors) error\(errors == 1 ? "" : "s"), \(warnings) warning\(warnings == 1 ? "" : "s")"
            + (undetermined > 0 ? ", \(undetermined) undetermined" : "")
    }

    /// The proxy's exit status under `--fail-on`: 1 when a finding at or above it was seen.
    package func exitStatus(failOn: FailOn) -> Int32 {
        failOn.fails(errors: errors, warnings: warnings) ? 1 : 0
    }

    /// Ends the detection: the spec it chose judges the records held so far, then the rest.
    private func decide() {
        guard let decided = pending else { return }
        pending = nil
        if let chosen = decided.load(decided.detection.specName) {
            spec = chosen
            analyzer = LiveAnalyzer(options: AnalyzerOptions(spec: chosen))
        }
        // The chosen spec judges the clients whose own detection decides nothing.
        perClient = SpecPerClientAnalyzer(specs: ClientSpecs(fallback: AnalyzerOptions(spec: spec),
                                                             table: decided.detection.table, load: decided.load))
        emit(TerminalText.escape("live analysis: " + decided.detection.line))
        for record in decided.held {
            let events = events(feeding: record)
            onEvents?(events, last)
            show(events)
        }
    }

    private func show(_ events: [AnalysisEvent]) {
        for event in events {
            switch event {
            case .finding(let finding):
                if finding.severity == .error { errors += 1 } else { warnings += 1 }
                onFinding?(finding)
            case .fault: break
            case .undetermined: undetermined += 1
            case .client:
                clients += 1
                if !transitions { continue }
            case .transition: if !transitions { continue }
            case .connection:
                connections += 1
                continue
            case .connectionEnded: continue
            }
            switch style {
            case .demo:
                if let line = LiveLine.format(event) { emit("live: " + line) }
            case .proxy:
                guard let (t, text) = LiveLine.body(event) else { continue }
                let at = max(t, shownUntil, last)
                shownUntil = at
                emit("+\(LiveTime.seconds(at)) \(text)" + (t < at ? " (at \(LiveTime.seconds(t)))" : ""))
            }
        }
    }
}

/// The live analysis's spec detection: the table's `EntryDetection` over the first records,
/// which are held (bounded) until it decides.
struct PendingDetection {
    /// Records held at most: detection's own limit.
    static let recordLimit = EntryDetection.recordLimit
    /// Bytes of frame payload held at most (large frames are not kept waiting).
    static let byteLimit = 8 << 20
    /// Record time after the first record past which the spec is chosen anyway (a client
    /// that sends nothing yet is judged by what its upgrade showed).
    static let patience: Micros = 2_000_000

    var detection: EntryDetection
    var held: [CaptureRecord] = []
    var heldBytes = 0
    var firstAt: Micros?
    let load: (String) -> LifecycleSpec?

    /// Holds `record`; true when the spec must be chosen now.
    mutating func hold(_ record: CaptureRecord, at now: Micros) -> Bool {
        if firstAt == nil { firstAt = now }
        held.append(record)
        if case .frame(let frame) = record { heldBytes += frame.payload.count }
        let decided = detection.offer(record)
        return decided || held.count >= Self.recordLimit || heldBytes >= Self.byteLimit || outwaited(at: now)
    }

    func outwaited(at now: Micros) -> Bool {
        guard let firstAt else { return false }
        return now - firstAt >= Self.patience
    }
}
