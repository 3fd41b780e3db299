import Capture
import Lifecycle
import Vocabulary

/// What a stopped `RecordingProxy` hands back: the findings of its live lifecycle analysis
/// (in memory: no file is read), what went wrong in the proxy itself, and the capture file
/// when one was written.
public struct Recording: Sendable, Hashable {
    /// The lifecycle findings, made by the analysis `faultline proxy --spec` runs as the
    /// traffic passed, with the spec given to `start`; connections still open at `stop()`
    /// ended with the session, as `faultline analyze` ends them at the capture's end.
    public let findings: [Finding]
    /// The spec the findings were made with.
    public let spec: String
    /// Problems of the proxy itself (a connection it could not accept, a capture that could
    /// not be written), which `faultline proxy` prints on standard error; empty when none.
    public let problems: [String]
    /// The capture file (JSON Lines, what `faultline analyze` reads), or nil when
    /// `start` was given no path.
    public let path: String?

    public init(findings: [Finding], spec: String, problems: [String], path: String?) {
        self.findings = findings
        self.spec = spec
        self.problems = problems
        self.path = path
    }

    /// The findings of error severity.
    public var errors: [Finding] { findings.filter { $0.severity == .error } }

    /// The capture analyzed again from its file, as `faultline analyze --spec SPEC` does:
    /// `spec` is a built-in spec (bird, pusher, websocket, agora-rtm, agora-rtm-stream) or a
    /// spec file's path. Throws `FaultlineKitError` for an unknown spec, a recording made
    /// without a file, or an unreadable capture.
    public func findings(spec: String) throws(FaultlineKitError) -> [Finding] {
        guard let path else { throw FaultlineKitError("the proxy recorded to no file: give start(recordingTo:) a path") }
        let loaded = try Self.loadSpec(spec)
        var analyzer = LiveAnalyzer(options: AnalyzerOptions(spec: loaded))
        var events: [AnalysisEvent] = []
        var last: Micros = 0
        do {
            var reader = try CaptureReader(path: path)
            while let record = try reader.nextRecord() {
                if let t = record.time { last = max(last, t) }
                events += analyzer.feed(record)
            }
        } catch {
            throw FaultlineKitError("\(path): \(error)")
        }
        events += analyzer.finish(at: last)
        return events.compactMap { event in
            guard case .finding(let finding) = event else { return nil }
            return Finding(finding)
        }
    }

    static func loadSpec(_ spec: String) throws(FaultlineKitError) -> LifecycleSpec {
        do { return try SpecLoader.load(spec) } catch { throw FaultlineKitError("spec \(spec): \(error)") }
    }
}
