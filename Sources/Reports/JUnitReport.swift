import Capture
import Lifecycle
import Vocabulary

/// JUnit XML, in the shape Jenkins (junit-10 schema) and GitLab read: one `<testsuite>` per
/// client, one `<testcase>` per rule of the spec. A case's findings are its `<failure>` when
/// their severity fails the run under `--fail-on`; below it (warnings by default) they go to
/// the case's `<system-out>`, so CI shows them without turning red. A rule that was not
/// checked (`channels.auth-signature` without `--app-secret`) or whose check was still open
/// when the capture ended is `<skipped message="...">`: never a silent pass.
public enum JUnitReport {
    /// The outcome of one (client, rule) case.
    enum Outcome {
        case passed
        /// Findings below the fail threshold: passed, with the findings as output.
        case passedWithFindings([Finding])
        case failed([Finding])
        case skipped(String)
    }

    static func outcome(rule: String, client: AnalysisReport.Client, report: AnalysisReport,
                        unchecked: [String: String]) -> Outcome {
        if let reason = unchecked[rule] { return .skipped("not checked: \(reason)") }
        let found = client.findings.filter { $0.rule == rule }
        if found.contains(where: { report.failOn.fails($0.severity) }) { return .failed(found) }
        // An open check outweighs a finding that does not fail the run: neither is a pass.
        if let open = client.undetermined.first(where: { $0.rule == rule }) {
            return .skipped("undetermined: \(open.message)")
        }
        return found.isEmpty ? .passed : .passedWithFindings(found)
    }

    public static func render(_ report: AnalysisReport) -> String {
        var all = ""
        render(report) { all += $0 }
        return all
    }

    /// The same XML in pieces of about 64 KiB, so a large report is never held whole. The
    /// root element carries the total of failures, so a first pass counts them before
    /// any suite is written.
    public static func render(_ report: AnalysisReport, emit: (String) -> Void) {
        let unchecked = Dictionary(report.unchecked.map { ($0.rule, $0.reason) }, uniquingKeysWith: { a, _ in a })
        var totalFailures = 0
        var tests = 0
        for client in report.clients {
            // Each client's rules are its spec's (several specs: its own pack's).
            let rules = report.spec(of: client).rules
            tests += rules.count
            for rule in rules {
                if case .failed = outcome(rule: rule, client: client, report: report, unchecked: unchecked) { totalFailures += 1 }
            }
        }
        var out = #"<?xml version="1.0" encoding="UTF-8"?>"# + "\n"
        out += #"<testsuites name="faultline analyze \#(escapeXML(report.spec.name))" tests="\#(tests)" failures="\#(totalFailures)" errors="0" time="\#(junitTime(report.endTime))">"# + "\n"
        for client in report.clients {
            let rules = report.spec(of: client).rules
            let outcomes = rules.map { outcome(rule: $0, client: client, report: report, unchecked: unchecked) }
            suite(client, rules: rules, outcomes: outcomes, report: report, into: &out)
            emitWhenFull(&out, emit)
        }
        out += "</testsuites>\n"
        emit(out)
    }

    /// One client's `<testsuite>`, a `<testcase>` per rule.
    static func suite(_ client: AnalysisReport.Client, rules: [String], outcomes: [Outcome], report: AnalysisReport,
                      into suites: inout String) {
        var failures = 0
        var skipped = 0
        for o in outcomes {
            if case .failed = o { failures += 1 }
            if case .skipped = o { skipped += 1 }
        }
        let span = max(0, clientEnd(client, report: report) - client.info.firstSeen)
        suites += #"  <testsuite name="\#(escapeXML(client.info.id))" tests="\#(rules.count)" failures="\#(failures)" errors="0" skipped="\#(skipped)" time="\#(junitTime(span))""#
        if let start = report.startedAt, let stamp = WallClock.timestamp(start, plus: client.info.firstSeen) {
            suites += #" timestamp="\#(stamp)""#
        }
        suites += ">\n"
        suites += #"    <properties><property name="key" value="\#(escapeXML(client.info.key))"/>"#
            + #"<property name="grouping" value="\#(escapeXML(report.grouping))"/>"#
            + #"<property name="spec" value="\#(escapeXML(report.spec(of: client).name))"/>"#
            + #"<property name="fail-on" value="\#(report.failOn.rawValue)"/>"#
        // A fleet's report (analyze --merge): which replica each connection was on.
        if !report.replicas.isEmpty {
            suites += #"<property name="connections" value="\#(escapeXML(client.connectionIDs.map(report.connectionLabel).joined(separator: ", ")))"/>"#
        }
        suites += "</properties>\n"
        for (rule, o) in zip(rules, outcomes) {
            suites += #"    <testcase classname="\#(escapeXML(client.info.id))" name="\#(escapeXML(rule))" time="0""#
            switch o {
            case .passed:
                suites += "/>\n"
                continue
            case .skipped(let message):
                suites += ">\n" + #"      <skipped message="\#(escapeXML(message))"/>"# + "\n"
            case .failed(let found):
                let worst = found.contains { $0.severity == .error } ? Severity.error : .warning
                suites += ">\n" + #"      <failure type="\#(worst.rawValue)" message="\#(escapeXML(found[0].message))">"#
                suites += escapeXML(found.map { "\($0.severity.rawValue): " + describe($0) }.joined(separator: "\n"))
                suites += "</failure>\n"
            case .passedWithFindings(let found):
                suites += ">\n      <system-out>"
                suites += escapeXML(found.map { "\($0.severity.rawValue) (does not fail under --fail-on \(report.failOn.rawValue)): " + describe($0) }
                    .joined(separator: "\n"))
                suites += "</system-out>\n"
            }
            suites += "    </testcase>\n"
        }
        suites += "  </testsuite>\n"
    }

    /// The last thing known of a client: its last transition, finding or connection end.
    static func clientEnd(_ client: AnalysisReport.Client, report: AnalysisReport) -> Micros {
        var end = client.info.firstSeen
        if let t = client.transitions.last?.t { end = max(end, t) }
        if let t = client.findings.last?.t { end = max(end, t) }
        for c in client.connections { end = max(end, c.endedAt ?? c.openedAt) }
        return min(end, max(report.endTime, client.info.firstSeen))
    }

    /// Seconds with three decimals and no sign or exponent, as the schema's time pattern wants.
    static func junitTime(_ t: Micros) -> String {
        seconds(max(0, t))
    }

    static func describe(_ f: Finding) -> String {
        var text = "conn \(f.conn) at \(seconds(f.t)) s: \(f.message)"
        if let note = f.faultNote { text += " (\(note))" }
        for e in f.evidence { text += "\n  conn \(e.conn) \(seconds(e.t)) s \(e.from?.rawValue ?? "-"): \(e.summary)" }
        return text
    }
}
