import CLI
import Capture
import Lifecycle
import Vocabulary

/// One line per analyzer event for `faultline proxy --live`: transitions and findings as
/// they happen, in the text report's wording, control characters escaped. Nil for events
/// not worth a line.
public enum LiveLine {
    /// "3.028 s  client-1 conn 1  ERROR ...": the demo's condensed view.
    public static func format(_ event: AnalysisEvent) -> String? {
        body(event).map { "\(seconds($0.t)) s  \($0.text)" }
    }

    /// The event's time and its line without the time (control characters escaped), for a
    /// view that writes times its own way (`proxy --live`: "+3.028000 client-1 conn 1  ERROR ...").
    public static func body(_ event: AnalysisEvent) -> (t: Micros, text: String)? {
        raw(event).map { ($0.t, TerminalText.escape($0.text)) }
    }

    private static func raw(_ event: AnalysisEvent) -> (t: Micros, text: String)? {
        switch event {
        case .client(let info):
            return (info.firstSeen, "\(info.id)  new client: \(info.key)")
        case .transition(let t):
            let conn = t.conn.map { " conn \($0)" } ?? ""
            return (t.t, "\(t.client)\(conn)  \(t.from.map { "\($0) -> " } ?? "")\(t.to)  (\(t.cause))")
        case .finding(let f):
            var line = "\(f.client) conn \(f.conn)  \(f.severity.rawValue.uppercased()) \(f.rule): \(f.message)"
            if let note = f.faultNote { line += " (\(note))" }
            return (f.t, line)
        case .fault(let mark):
            return (mark.t, "\(mark.client)  fault injected: \(mark.rule) (\(mark.detail))")
        case .undetermined(let u):
            return (u.t, "\(u.client) conn \(u.conn)  UNDETERMINED \(u.rule): \(u.message)")
        case .connection, .connectionEnded:
            return nil
        }
    }
}
