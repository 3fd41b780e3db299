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
    /// without a file, or an unreadable capture. `analysis(spec:)` has what else it found.
    public func findings(spec: String) throws(FaultlineKitError) -> [Finding] {
        try analysis(spec: spec).findings
    }

    /// The whole analysis of the capture file with `spec`: its findings, undetermined
    /// checks, warnings and unchecked rules (`CaptureAnalysis`).
    public func analysis(spec: String) throws(FaultlineKitError) -> CaptureAnalysis {
        guard let path else { throw FaultlineKitError("the proxy recorded to no file: give start(recordingTo:) a path") }
        return try CaptureAnalysis(path: path, spec: spec)
    }

    static func loadSpec(_ spec: String) throws(FaultlineKitError) -> LifecycleSpec {
        do { return try SpecLoader.load(spec) } catch { throw FaultlineKitError("spec \(spec): \(error)") }
    }
}
