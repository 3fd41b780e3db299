import CLI
import Capture
import Lifecycle

/// One line per analyzer event for `faultline proxy --live`: transitions and findings as
/// they happen, in the text report's wording, control characters escaped. Nil for events
/// not worth a line.
public enum LiveLine {
    public static func format(_ event: AnalysisEvent) -> String? {
        raw(event).map { TerminalText.escape($0) }
    }

    private static func raw(_ event: AnalysisEvent) -> String? {
        switch event {
        case .client(let info):
            return "\(seconds(info.firstSeen)) s  \(info.id)  new client: \(info.key)"
        case .transition(let t):
            let conn = t.conn.map { " conn \($0)" } ?? ""
            return "\(seconds(t.t)) s  \(t.client)\(conn)  \(t.from.map { "\($0) -> " } ?? "")\(t.to)  (\(t.cause))"
        case .finding(let f):
            var line = "\(seconds(f.t)) s  \(f.client) conn \(f.conn)  \(f.severity.rawValue.uppercased()) \(f.rule): \(f.message)"
            if let fault = f.causedByFault { line += " (caused by injected fault \(fault))" }
            return line
        case .fault(let mark):
            return "\(seconds(mark.t)) s  \(mark.client)  fault injected: \(mark.rule) (\(mark.detail))"
        case .connection, .connectionEnded:
            return nil
        }
    }
}
