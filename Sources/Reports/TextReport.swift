import Capture
import Lifecycle

/// Plain text: the grouping, a timeline per client, then the findings, then one summary line.
public enum TextReport {
    public static func render(_ report: AnalysisReport) -> String {
        var all = ""
        render(report) { all += $0 }
        return all
    }

    /// The same text in pieces of about 64 KiB, so a large report is never held whole.
    public static func render(_ report: AnalysisReport, emit: (String) -> Void) {
        var out = "faultline analyze: spec \(report.spec.name), input \(report.inputs.joined(separator: ", "))"
        if let prefix = report.prefix { out += ", prefix \(prefix)" }
        out += "\ngrouping: \(report.grouping)\n"
        for warning in report.warnings { out += "warning: \(warning)\n" }
        for client in report.clients {
            out += "\n\(client.info.id)  key \(client.info.key)  connections: \(client.connectionIDs.map(String.init).joined(separator: ", "))"
            if client.omitted.connections > 0 { out += " (and \(client.omitted.connections) more)" }
            out += "\n"
            if let note = omittedNote(client.omitted) { out += "  (\(note))\n" }
            var lines: [(Micros, Int, String)] = []
            for (i, t) in client.transitions.enumerated() {
                let conn = t.conn.map { "conn \($0)" } ?? ""
                lines.append((t.t, i, "  \(time(t.t))  \(pad(conn, 8))  \(t.from.map { "\($0) -> " } ?? "")\(t.to)  (\(t.cause))"))
            }
            for f in client.faults {
                lines.append((f.t, 1_000_000, "  \(time(f.t))  \(pad(f.conn.map { "conn \($0)" } ?? "", 8))  fault injected: \(f.rule) (\(f.detail))"))
            }
            for f in client.findings {
                lines.append((f.t, 2_000_000, "  \(time(f.t))  \(pad("conn \(f.conn)", 8))  ! \(f.rule)"))
            }
            for a in report.authRequests where client.connectionIDs.contains(a.conn) {
                let status = a.status.map(String.init) ?? "no response"
                lines.append((a.t, 500_000, "  \(time(a.t))  \(pad("http \(a.httpConn)", 8))  auth request \(a.method) \(a.url) -> \(status)"
                    + " (its signature used by the subscribe\(a.channel.map { " to \($0)" } ?? "") on conn \(a.conn) at \(seconds(a.subscribeT)) s)"))
            }
            for line in lines.sorted(by: { ($0.0, $0.1) < ($1.0, $1.1) }) { out += line.2 + "\n" }
            if out.utf8.count >= 1 << 16 { emit(out); out = "" }
        }
        out += "\nfindings:\n"
        if report.findings.isEmpty { out += "  none\n" }
        for f in report.findings {
            out += "  \(pad(f.severity.rawValue, 7)) \(f.rule)  \(f.client) conn \(f.conn) at \(seconds(f.t)) s: \(f.message)"
            if f.party == .server { out += " [server]" }
            if let fault = f.causedByFault { out += " (caused by injected fault \(fault))" }
            out += "\n"
            for e in f.evidence {
                out += "      conn \(e.conn) \(seconds(e.t)) s \(e.from?.rawValue ?? "-"): \(e.summary)\n"
            }
            if out.utf8.count >= 1 << 16 { emit(out); out = "" }
        }
        if report.findings.count < report.findingCount {
            out += "  (\(report.findingCount - report.findings.count) more findings omitted: each client keeps its first and last ones)\n"
        }
        out += "\nsummary: \(report.summaryLine)\n"
        emit(out)
    }

    /// "omitted from the middle: 812 transitions, 203 connections", or nil if nothing was.
    static func omittedNote(_ o: AnalysisReport.Omitted) -> String? {
        guard !o.isEmpty else { return nil }
        let parts = [(o.transitions, "transitions"), (o.connections, "connections"), (o.faults, "faults"), (o.findings, "findings")]
            .filter { $0.0 > 0 }.map { "\($0.0) \($0.1)" }
        return "omitted from the middle of this client's history: " + parts.joined(separator: ", ")
    }

    /// A right-aligned "12.345 s" column, so the timeline's times line up.
    static func time(_ t: Micros) -> String {
        let text = seconds(t) + " s"
        return String(repeating: " ", count: max(0, 11 - text.count)) + text
    }

    static func pad(_ s: String, _ width: Int) -> String {
        s.count >= width ? s : s + String(repeating: " ", count: width - s.count)
    }
}
