import Analysis
import CLI
import Lifecycle
import Reports

/// A capture or pcap analyzed as `faultline analyze --spec SPEC` analyzes it (the same
/// `AnalysisRun`): any input `analyze` opens (a capture, compressed or in rotated parts, a
/// pcap), with what the findings alone do not say: the checks the input ended too early
/// to decide, what the analysis could not see, and the rules it did not check.
public struct CaptureAnalysis: Sendable, Hashable {
    public let findings: [Finding]
    /// Checks the input ended too early to decide, one line each ("stale.pong-missing
    /// client-1 conn 2: ..."): neither a pass nor a finding.
    public let undetermined: [String]
    /// What the analysis could not see or judged differently, as `analyze` reports it: the
    /// input's own warnings (a truncated capture, frames lost to stream errors) and the
    /// clients judged at connection level only.
    public let warnings: [String]
    /// The spec's rules this analysis did not check, and why ("channels.auth-signature:
    /// needs --app-secret ...").
    public let notChecked: [String]

    /// Analyzes `path` with `spec` (a built-in spec or a spec file's path), verifying auth
    /// signatures when `appSecret` is given. Throws `FaultlineKitError` for an unknown spec
    /// or an input that cannot be read or holds no connection.
    public init(path: String, spec: String, appSecret: String? = nil) throws(FaultlineKitError) {
        let loaded = try Recording.loadSpec(spec)
        let options = AnalysisOptions(spec: SpecChoice(loaded: loaded), appSecret: appSecret, limits: .unlimited)
        let report: AnalysisReport
        do {
            report = try AnalysisRun(inputs: [path], options: options).run()
        } catch let error as UsageError {
            throw FaultlineKitError(error.message)
        } catch {
            throw FaultlineKitError("\(path): \(error)")
        }
        findings = report.findings.map(Finding.init)
        undetermined = report.undetermined.map { "\($0.rule) \($0.client) conn \($0.conn): \($0.message)" }
        warnings = report.warnings
        notChecked = report.unchecked.map { "\($0.rule): \($0.reason)" }
    }
}
