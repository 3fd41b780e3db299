import Capture
import Lifecycle
import Vocabulary

/// A capture written by a `RecordingProxy` (JSON Lines, the format `faultline analyze`
/// reads), and the lifecycle findings in it.
public struct Recording: Sendable, Hashable {
    /// The capture file.
    public let path: String

    public init(path: String) { self.path = path }

    /// What one lifecycle rule found wrong in the recorded traffic, as `faultline analyze`
    /// reports it.
    public struct Finding: Sendable, Hashable, CustomStringConvertible {
        /// The rule's id, such as "backoff.jitter" (`faultline specs rules` lists them).
        public var rule: String
        /// "error" or "warning".
        public var severity: String
        /// The client the finding is about ("client-1"; grouping as `faultline analyze`).
        public var client: String
        /// The connection number in the capture.
        public var connection: Int
        /// Seconds since the proxy started.
        public var time: Double
        public var message: String
        /// "caused by injected fault X" or "after injected fault X", when a fault rule is
        /// involved.
        public var faultNote: String?

        public var description: String {
            "\(severity) \(rule) \(client) conn \(connection) at \(time) s: \(message)" + (faultNote.map { " (\($0))" } ?? "")
        }
    }

    /// Runs the lifecycle analysis over the capture, as `faultline analyze --spec SPEC`
    /// does: `spec` is a built-in spec (bird, pusher, websocket, agora-rtm,
    /// agora-rtm-stream) or a spec file's path. Throws `FaultlineKitError` for an unknown
    /// spec or an unreadable capture.
    public func findings(spec: String = "bird") throws(FaultlineKitError) -> [Finding] {
        let loaded: LifecycleSpec
        do { loaded = try SpecLoader.load(spec) } catch { throw FaultlineKitError("spec \(spec): \(error)") }
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
            return Finding(rule: finding.rule, severity: finding.severity.rawValue, client: finding.client,
                           connection: finding.conn, time: Double(finding.t) / 1_000_000, message: finding.message,
                           faultNote: finding.faultNote)
        }
    }
}
