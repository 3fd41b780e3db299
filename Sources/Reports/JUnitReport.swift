import Capture
import Lifecycle

/// JUnit XML: one test suite per client, one test case per (client, rule of the spec);
/// the findings of a case are its `<failure>` (type `error` or `warning`), so CI shows them.
public enum JUnitReport {
    public static func render(_ report: AnalysisReport) -> String {
        let rules = report.spec.rules
        let tests = report.clients.count * rules.count
        let failures = failingCases(report)
        var out = #"<?xml version="1.0" encoding="UTF-8"?>"# + "\n"
        out += #"<testsuites name="faultline analyze \#(escapeXML(report.spec.name))" tests="\#(tests)" failures="\#(failures)" errors="0">"# + "\n"
        for client in report.clients {
            let clientFailures = rules.filter { rule in client.findings.contains { $0.rule == rule } }.count
            out += #"  <testsuite name="\#(escapeXML(client.info.id))" tests="\#(rules.count)" failures="\#(clientFailures)" errors="0">"# + "\n"
            out += #"    <properties><property name="key" value="\#(escapeXML(client.info.key))"/>"#
                + #"<property name="grouping" value="\#(escapeXML(report.grouping))"/></properties>"# + "\n"
            for rule in rules {
                let found = client.findings.filter { $0.rule == rule }
                out += #"    <testcase classname="\#(escapeXML(client.info.id))" name="\#(escapeXML(rule))""#
                if found.isEmpty { out += "/>\n"; continue }
                out += ">\n"
                // Every finding is a failure, so CI lists it; the type says how bad it is.
                let worst = found.contains { $0.severity == .error } ? Severity.error : .warning
                out += #"      <failure type="\#(worst.rawValue)" message="\#(escapeXML(found[0].message))">"#
                out += escapeXML(found.map { "\($0.severity.rawValue): " + describe($0) }.joined(separator: "\n"))
                out += "</failure>\n"
                out += "    </testcase>\n"
            }
            out += "  </testsuite>\n"
        }
        out += "</testsuites>\n"
        return out
    }

    static func failingCases(_ report: AnalysisReport) -> Int {
        report.clients.reduce(0) { sum, client in
            sum + report.spec.rules.filter { rule in client.findings.contains { $0.rule == rule } }.count
        }
    }

    static func describe(_ f: Finding) -> String {
        var text = "conn \(f.conn) at \(seconds(f.t)) s: \(f.message)"
        if let note = f.faultNote { text += " (\(note))" }
        for e in f.evidence { text += "\n  conn \(e.conn) \(seconds(e.t)) s \(e.from?.rawValue ?? "-"): \(e.summary)" }
        return text
    }
}
