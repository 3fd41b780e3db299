import CLI
import Capture
import Lifecycle
import Vocabulary

/// Plain text, grouped by client: the capture and grouping, a summary (findings by rule,
/// faults fired), then per client its timeline, its findings (identical ones folded with a
/// count, `×8`) and its undetermined checks; the rules not checked; and one summary line
/// last, for scripts. Times are seconds since the capture's start, with the wall-clock time
/// of day beside them when the capture header gives its start. Every line that holds text
/// from the input (client keys from headers, causes, close reasons, event names, messages,
/// warnings) goes through `TerminalText.escape`.
public enum TextReport {
    public static func render(_ report: AnalysisReport) -> String {
        var all = ""
        render(report) { all += $0 }
        return all
    }

    /// The same text in pieces of about 64 KiB, so a large report is never held whole.
    public static func render(_ report: AnalysisReport, emit: (String) -> Void) {
        var head = "faultline analyze: spec \(report.spec.name), input \(report.inputs.joined(separator: ", "))"
        if let prefix = report.prefix { head += ", prefix \(prefix)" }
        var out = TerminalText.escape(head)
        if let start = report.startedAt, let iso = WallClock.iso(start, plus: 0) { out += "\ncapture started \(iso)" }
        out += "\n" + TerminalText.escape("grouping: \(report.grouping)") + "\n"
        if let line = report.specsLine { out += TerminalText.escape(line) + "\n" }
        for warning in report.warnings { out += TerminalText.escape("warning: \(warning)") + "\n" }
        out += "\n" + summary(report)
        let auth = AuthRequestIndex(report.authRequests)
        for client in report.clients {
            out += "\n" + TerminalText.escape("\(client.info.id)  key \(client.info.key)  connections: \(client.connectionIDs.map(report.connectionLabel).joined(separator: ", "))")
            if client.omitted.connections > 0 { out += " (and \(client.omitted.connections) more)" }
            if let spec = client.spec { out += TerminalText.escape("  spec \(spec)") }
            out += "\n"
            if let note = omittedNote(client.omitted) { out += "  (\(note))\n" }
            var lines: [(Micros, Int, String)] = []
            for (i, t) in client.transitions.enumerated() {
                let conn = t.conn.map { "conn \($0)" } ?? ""
                lines.append((t.t, i, "  \(stamp(t.t, report))  \(pad(conn, 8))  \(t.from.map { "\($0) -> " } ?? "")\(t.to)  (\(t.cause))"))
            }
            for f in client.faults {
                lines.append((f.t, 1_000_000, "  \(stamp(f.t, report))  \(pad(f.conn.map { "conn \($0)" } ?? "", 8))  fault injected: \(f.rule) (\(f.detail))"))
            }
            for f in client.findings {
                lines.append((f.t, 2_000_000, "  \(stamp(f.t, report))  \(pad("conn \(f.conn)", 8))  ! \(f.rule)"))
            }
            for u in client.undetermined {
                lines.append((u.t, 3_000_000, "  \(stamp(u.t, report))  \(pad("conn \(u.conn)", 8))  ? \(u.rule) undetermined"))
            }
            for a in auth.links(of: client.connectionIDs) {
                let status = a.status.map(String.init) ?? "no response"
                lines.append((a.t, 500_000, "  \(stamp(a.t, report))  \(pad("http \(a.httpConn)", 8))  auth request \(a.method) \(a.url) -> \(status)"
                    + " (its signature used by the subscribe\(a.channel.map { " to \($0)" } ?? "") on conn \(a.conn) at \(seconds(a.subscribeT)) s)"))
            }
            for line in lines.sorted(by: { ($0.0, $0.1) < ($1.0, $1.1) }) { out += TerminalText.escape(line.2) + "\n" }
            out += findings(client, report)
            if !client.undetermined.isEmpty {
                out += "  undetermined (the capture ended before these checks could be decided; not a pass):\n"
                for u in client.undetermined {
                    out += TerminalText.escape("    \(pad(u.severity.rawValue, 7)) \(u.rule)  conn \(u.conn) from \(seconds(u.t)) s to \(seconds(u.deadline)) s: \(u.message)") + "\n"
                }
            }
            emitWhenFull(&out, emit)
        }
        if report.findings.count < report.findingCount {
            out += "\n(\(report.findingCount - report.findings.count) more findings omitted: each client keeps its first and last ones)\n"
        }
        if !report.unchecked.isEmpty {
            out += "\nnot checked:\n"
            for r in report.unchecked { out += TerminalText.escape("  \(r.rule): \(r.reason)") + "\n" }
        }
        out += "\nsummary: \(report.summaryLine)\n"
        emit(out)
    }

    /// The totals, then one line per (rule, severity) with its count and clients, and the
    /// faults fired.
    static func summary(_ report: AnalysisReport) -> String {
        var out = "summary: \(report.summaryLine)\n"
        // A finding's row is its rule and severity; an open check's, its rule (the
        // severity shown is the first one's).
        var rows = ClientTally<SummaryRowKey>()
        var severities: [Severity] = []
        for f in report.findings {
            if rows.add(.finding(f.rule, f.severity), client: f.client) { severities.append(f.severity) }
        }
        for u in report.undetermined {
            if rows.add(.undetermined(u.rule), client: u.client) { severities.append(u.severity) }
        }
        let width = rows.rows.map(\.key.label.count).max() ?? 0
        for (row, severity) in zip(rows.rows, severities) {
            out += "  \(pad(severity.rawValue, 7)) \(pad(row.key.label, width))  ×\(row.count)  \(clientList(row.clients))\n"
        }
        var faults = ClientTally<String>()
        for client in report.clients.withoutLists {
            for mark in client.faults { faults.add(mark.rule, client: client.info.id) }
        }
        if !faults.rows.isEmpty {
            out += TerminalText.escape("  faults fired: " + faults.rows.map { "\($0.key) ×\($0.count)" }.joined(separator: "; ")) + "\n"
        }
        return out
    }

    /// A summary row: a finding's rule and severity, or a rule's open checks.
    enum SummaryRowKey: Hashable {
        case finding(String, Severity)
        case undetermined(String)

        var label: String {
            switch self {
            case .finding(let rule, _): rule
            case .undetermined(let rule): rule + " (undetermined)"
            }
        }
    }

    static func clientList(_ ids: [String]) -> String {
        ids.count <= 6 ? ids.joined(separator: ", ") : ids.prefix(5).joined(separator: ", ") + " and \(ids.count - 5) more"
    }

    /// A client's findings, identical ones (rule, severity, message, fault) folded into one
    /// entry with a count and the list of where they happened.
    static func findings(_ client: AnalysisReport.Client, _ report: AnalysisReport) -> String {
        guard !client.findings.isEmpty else { return "  findings: none\n" }
        var out = "  findings:\n"
        for group in FindingGroup.make(client.findings) {
            let f = client.findings[group.indices[0]]
            let count = group.indices.count
            var line = "    \(pad(f.severity.rawValue, 7)) \(f.rule)\(count > 1 ? " ×\(count)" : "")  "
            line += "conn \(f.conn) at \(seconds(f.t)) s"
            if let start = report.startedAt, let clock = WallClock.timeOfDay(start, plus: f.t) { line += " (\(clock))" }
            line += ": \(f.message)"
            if f.party == .server { line += " [server]" }
            if let note = f.faultNote { line += " (\(note))" }
            out += TerminalText.escape(line) + "\n"
            if count > 1 {
                let places = group.indices.dropFirst().prefix(8).map { "conn \(client.findings[$0].conn) at \(seconds(client.findings[$0].t)) s" }
                out += "        also: " + places.joined(separator: ", ") + (count - 1 > 8 ? " and \(count - 9) more" : "") + "\n"
            }
            for e in f.evidence {
                out += TerminalText.escape("        conn \(e.conn) \(seconds(e.t)) s \(e.from?.rawValue ?? "-"): \(e.summary)") + "\n"
            }
        }
        return out
    }

    /// "omitted from the middle: 812 transitions, 203 connections", or nil if nothing was.
    static func omittedNote(_ o: AnalysisReport.Omitted) -> String? {
        guard !o.isEmpty else { return nil }
        let parts = [(o.transitions, "transitions"), (o.connections, "connections"), (o.faults, "faults"), (o.findings, "findings")]
            .filter { $0.0 > 0 }.map { "\($0.0) \($0.1)" }
        return "omitted from the middle of this client's history: " + parts.joined(separator: ", ")
    }

    /// The time column: right-aligned seconds, and the time of day when known.
    static func stamp(_ t: Micros, _ report: AnalysisReport) -> String {
        guard let start = report.startedAt, let clock = WallClock.timeOfDay(start, plus: t) else { return time(t) }
        return time(t) + "  " + clock
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
