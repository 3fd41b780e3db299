import Lifecycle
import Vocabulary

/// What one lifecycle rule found wrong in the recorded traffic, as `faultline analyze`
/// reports it.
public struct Finding: Sendable, Hashable, CustomStringConvertible {
    /// `error` findings make `faultline analyze` exit 1; `warning`s do not by default.
    public enum Severity: String, Sendable, Hashable, Comparable {
        case warning, error
        public static func < (a: Severity, b: Severity) -> Bool { a == .warning && b == .error }
    }

    /// One frame or wire event the finding rests on.
    public struct Evidence: Sendable, Hashable, CustomStringConvertible {
        /// The connection number in the capture, from 1.
        public var connection: Int
        /// Since the proxy started.
        public var time: Duration
        /// Who sent it; nil for events with no sender (the capture ending).
        public var from: Peer?
        /// "text bird:ping", "close 4201 'pong timeout'", "RST", "upgrade 101".
        public var summary: String

        public var description: String {
            "conn \(connection) at \(time)" + (from.map { " from \($0.rawValue)" } ?? "") + ": \(summary)"
        }
    }

    /// The rule's id, such as "backoff.jitter" (`faultline specs rules` lists them).
    public var rule: String
    public var severity: Severity
    /// The client the finding is about ("client-1"; grouping as `faultline analyze`).
    public var client: String
    /// The connection number in the capture, from 1.
    public var connection: Int
    /// Since the proxy started.
    public var time: Duration
    /// One line with the measured value against the bound.
    public var message: String
    public var evidence: [Evidence]
    /// The injected fault (its rule text) that explains the finding, such as the
    /// `stall-pongs` behind `server.pong-missing`.
    public var causedByFault: String?
    /// An injected fault that came before the finding on its connection without explaining
    /// it: the client's reaction to a fault is the client's own behaviour.
    public var afterFault: String?

    public var description: String {
        "\(severity.rawValue) \(rule) \(client) conn \(connection) at \(time): \(message)"
            + (causedByFault.map { " (caused by injected fault \($0))" } ?? afterFault.map { " (after injected fault \($0))" } ?? "")
    }

    init(_ finding: Lifecycle.Finding) {
        rule = finding.rule
        severity = finding.severity == .error ? .error : .warning
        client = finding.client
        connection = finding.conn
        time = .microseconds(finding.t)
        message = finding.message
        evidence = finding.evidence.map {
            Evidence(connection: $0.conn, time: .microseconds($0.t), from: $0.from.map { $0 == .client ? .client : .server }, summary: $0.summary)
        }
        causedByFault = finding.causedByFault
        afterFault = finding.afterFault
    }
}
