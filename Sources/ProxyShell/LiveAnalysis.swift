import CLI
import Capture
import Lifecycle
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
    /// Totals for the summary line.
    package private(set) var clients = 0
    package private(set) var connections = 0
    package private(set) var errors = 0
    package private(set) var warnings = 0
    package private(set) var undetermined = 0
    package let spec: LifecycleSpec
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

    package init(spec: LifecycleSpec, transitions: Bool) {
        self.spec = spec
        self.transitions = transitions
        analyzer = LiveAnalyzer(options: AnalyzerOptions(spec: spec))
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
        show(analyzer.feed(record))
    }

    package func advance(to now: Micros) {
        guard !finished else { return }
        last = max(last, now)
        show(analyzer.advance(to: now))
    }

    /// Stops the clock and runs the final timer checks (connections still open end with the
    /// session); then prints the summary line. Later records are ignored.
    package func finish(at time: Micros? = nil) {
        guard !finished else { return }
        timer?.cancel()
        timer = nil
        show(analyzer.finish(at: max(last, time ?? last)))
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
