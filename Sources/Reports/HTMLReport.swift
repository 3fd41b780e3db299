import Capture
import Lifecycle
import Vocabulary

/// One self-contained HTML page (no network: style and script inline). From the top: the
/// capture (date, wall-clock start), a summary (clients, connections, findings by rule and
/// severity, faults fired, undetermined and unchecked checks, a table of clients) whose rows
/// link to the lanes and findings; filters and zoom; then per client a swim lane on the time
/// axis every lane shares, the faults that fired, and its findings, identical ones grouped.
public enum HTMLReport {
    public static func render(_ report: AnalysisReport) -> String {
        var all = ""
        render(report) { all += $0 }
        return all
    }

    /// The same page in pieces of about 64 KiB: the tables and lists that have a row per
    /// client, and the client sections, are handed on as they grow, so a report with
    /// hundreds of thousands of clients is never held whole.
    public static func render(_ report: AnalysisReport, emit: (String) -> Void) {
        var out = """
            <!DOCTYPE html>
            <html lang="en"><head><meta charset="utf-8">
            <meta name="viewport" content="width=device-width, initial-scale=1">
            <title>faultline analysis: \(escapeXML(report.inputs.joined(separator: ", ")))</title>
            <style>\(HTMLAssets.style)</style></head>
            <body data-end="\(report.endTime)">
            <header><h1>faultline analysis</h1>
            <p class="meta">\(captureLine(report))</p>
            <p class="meta">spec <code>\(escapeXML(report.spec.name))</code>\(report.specsLine.map { " · \(escapeXML($0))" } ?? "")\(report.prefix.map { " · prefix <code>\(escapeXML($0))</code>" } ?? "") · grouping: \(escapeXML(report.grouping))</p>
            </header>

            """
        for warning in report.warnings { out += "<p class=\"meta warn\">warning: \(escapeXML(warning))</p>\n" }
        summary(report, into: &out, emit: emit)
        controls(report, into: &out, emit: emit)
        out += "<p class=\"legend\">\(legend(report))</p>\n"
        out += "<main id=\"clients\">\n"
        let auth = AuthRequestIndex(report.authRequests)
        for client in report.clients {
            out += section(client, report: report, auth: auth)
            emitWhenFull(&out, emit)
        }
        out += "</main>\n<script>\(HTMLAssets.script)</script>\n</body></html>\n"
        emit(out)
    }

    // MARK: header and summary

    static func captureLine(_ report: AnalysisReport) -> String {
        var line = "input \(escapeXML(report.inputs.joined(separator: ", ")))"
        if let start = report.startedAt, let iso = WallClock.iso(start, plus: 0), let date = WallClock.date(start) {
            line += " · captured on <b>\(date)</b>, started <time datetime=\"\(iso)\">\(iso.dropFirst(11).dropLast()) UTC</time>"
        }
        line += " · \(seconds(report.endTime)) s long"
        return line
    }

    /// Relative seconds, and the wall-clock time of day when the capture's start is known.
    static func when(_ t: Micros, _ report: AnalysisReport) -> String {
        var text = "\(seconds(t)) s"
        if let start = report.startedAt, let clock = WallClock.timeOfDay(start, plus: t) { text += " <span class=\"clock\">\(clock)</span>" }
        return text
    }

    static func summary(_ report: AnalysisReport, into out: inout String, emit: (String) -> Void) {
        let faultCount = report.clients.withoutLists.reduce(0) { $0 + $1.faults.count + $1.omitted.faults }
        out += "<section id=\"summary\"><h2>Summary</h2>\n"
        out += "<p class=\"verdict \(report.exitStatus == 0 ? "ok" : "bad")\">\(escapeXML(report.summaryLine)) · \(faultCount) fault\(faultCount == 1 ? "" : "s") fired · <span class=\"nw\">exit status \(report.exitStatus) (--fail-on \(report.failOn.rawValue))</span></p>\n"
        // Findings by rule.
        var tally = ClientTally<RuleAndSeverity>()
        for f in report.findings { tally.add(RuleAndSeverity(rule: f.rule, severity: f.severity), client: f.client) }
        let byRule = tally.rows.map { (rule: $0.key.rule, severity: $0.key.severity, count: $0.count, clients: $0.clients) }
            .sorted { ($0.severity == .error ? 0 : 1, $0.rule) < ($1.severity == .error ? 0 : 1, $1.rule) }
        // Findings by rule, faults fired and the checks left open side by side when the
        // window is wide enough, so the clients and their lanes come up on the first screen.
        out += "<div class=\"cols\"><div>\n<h3>Findings by rule</h3>\n"
        if byRule.isEmpty {
            out += "<p class=\"ok\">no findings</p>\n"
        } else {
            // Each client links to its first finding group of that rule (the group numbers
            // are the ones its section uses).
            var firstGroup: [String: Int] = [:]
            for client in report.clients {
                for (g, group) in FindingGroup.make(client.findings).enumerated() {
                    let f = client.findings[group.indices[0]]
                    let key = "\(client.info.id)\u{1}\(f.rule)\u{1}\(f.severity.rawValue)"
                    if firstGroup[key] == nil { firstGroup[key] = g + 1 }
                }
            }
            out += "<div class=\"scroll\"><table id=\"rules\"><tr><th>rule</th><th>severity</th><th>findings</th><th>clients</th></tr>\n"
            for row in byRule {
                out += "<tr data-rule=\"\(escapeXML(row.rule))\"><td><code>\(escapeXML(row.rule))</code></td><td class=\"sev-\(row.severity.rawValue)\">\(row.severity.rawValue)</td><td>\(row.count)</td><td>"
                for (i, id) in row.clients.enumerated() {
                    let g = firstGroup["\(id)\u{1}\(row.rule)\u{1}\(row.severity.rawValue)"]
                    out += (i > 0 ? " " : "") + clientLink(id, fragment: g.map { "f-\(anchor(id))-\($0)" })
                    emitWhenFull(&out, emit)
                }
                out += "</td></tr>\n"
            }
            if report.findings.count < report.findingCount {
                out += "<tr><td colspan=\"4\">\(report.findingCount - report.findings.count) more findings omitted from the middle of long client histories</td></tr>\n"
            }
            out += "</table></div>\n"
        }
        // Faults fired.
        var faultTally = ClientTally<String>()
        for client in report.clients.withoutLists {
            for mark in client.faults { faultTally.add(mark.rule, client: client.info.id) }
        }
        let faults = faultTally.rows.map { (rule: $0.key, count: $0.count, clients: $0.clients) }
        out += "</div>\n"
        if !faults.isEmpty {
            out += "<div>\n<h3>Faults fired</h3>\n<div class=\"scroll\"><table id=\"faults\"><tr><th>fault rule</th><th>fired</th><th>clients</th></tr>\n"
            for row in faults {
                let kind = faultKind(row.rule)
                out += "<tr><td><i class=\"sw\" style=\"background:\(faultColor(kind))\"></i><code>\(escapeXML(row.rule))</code></td><td>\(row.count)</td><td>"
                for (i, id) in row.clients.enumerated() {
                    out += (i > 0 ? " " : "") + clientLink(id, fragment: "faults-" + anchor(id))
                    emitWhenFull(&out, emit)
                }
                out += "</td></tr>\n"
            }
            out += "</table></div>\n</div>\n"
        }
        if !report.undetermined.isEmpty || !report.unchecked.isEmpty { out += "<div>\n" }
        if !report.undetermined.isEmpty {
            out += "<h3 id=\"undetermined\">Undetermined checks</h3>\n<p class=\"meta\">The capture ended while these checks were still open: neither a pass nor a finding.</p>\n<ul class=\"open\">\n"
            for u in report.undetermined {
                out += "<li>\(clientLink(u.client, fragment: "open-" + anchor(u.client))) conn \(u.conn) <code>\(escapeXML(u.rule))</code> (\(u.severity.rawValue)): \(escapeXML(u.message))</li>\n"
                emitWhenFull(&out, emit)
            }
            out += "</ul>\n"
        }
        if !report.unchecked.isEmpty {
            out += "<h3>Not checked</h3>\n<ul>\n"
            for r in report.unchecked { out += "<li><code>\(escapeXML(r.rule))</code>: \(escapeXML(r.reason))</li>\n" }
            out += "</ul>\n"
        }
        if !report.undetermined.isEmpty || !report.unchecked.isEmpty { out += "</div>\n" }
        out += "</div>\n"
        // Clients.
        out += "<h3>Clients</h3>\n<div class=\"scroll\"><table id=\"client-table\"><tr><th>client</th><th>connections</th><th>final state</th><th>errors</th><th>warnings</th><th>faults</th><th>undetermined</th><th class=\"overview\" title=\"0 to \(seconds(report.endTime)) s, as the lanes below\">timeline</th></tr>\n"
        for client in report.clients {
            let errors = client.findings.filter { $0.severity == .error }.count
            let warnings = client.findings.count - errors
            out += "<tr data-client=\"\(escapeXML(client.info.id))\"><td>\(clientLink(client.info.id))</td><td>\(client.connectionIDs.count + client.omitted.connections)</td>"
            out += "<td><i class=\"sw\" style=\"background:\(stateColor(client.finalState ?? "", report.spec(of: client)))\"></i>\(escapeXML(client.finalState ?? "-"))</td>"
            out += "<td class=\"\(errors > 0 ? "sev-error" : "")\">\(errors)</td><td class=\"\(warnings > 0 ? "sev-warning" : "")\">\(warnings)</td>"
            out += "<td>\(client.faults.count)</td><td>\(client.undetermined.count)</td>"
            out += "<td class=\"overview\">\(overview(client, report))</td></tr>\n"
            emitWhenFull(&out, emit)
        }
        out += "</table></div>\n</section>\n"
    }

    /// A client's lane in one line for the clients table: its states as bands on the whole
    /// capture's axis, and a tick for each finding, so every client's story shows on the
    /// first screen. At most one band starts per unit of its 1000-unit width (a later state
    /// starting in the same unit takes the band over), so a client with a long history
    /// stays small.
    static func overview(_ client: AnalysisReport.Client, _ report: AnalysisReport) -> String {
        let span = Double(max(report.endTime, 1_000_000))
        func unit(_ t: Micros) -> Double { (Double(min(max(t, 0), report.endTime)) / span * 1000).rounded() }
        var bands: [(x: Double, state: String)] = []
        for transition in client.transitions {
            let x = unit(transition.t)
            if let last = bands.last, last.x == x { bands[bands.count - 1].state = transition.to } else { bands.append((x, transition.to)) }
        }
        var out = "<svg class=\"mini\" viewBox=\"0 0 1000 12\" preserveAspectRatio=\"none\" role=\"img\" aria-label=\"states of \(escapeXML(client.info.id))\">"
        for (i, band) in bands.enumerated() {
            let until = i + 1 < bands.count ? bands[i + 1].x : unit(report.endTime)
            out += "<rect x=\"\(format1(band.x))\" y=\"2\" width=\"\(format1(max(1, until - band.x)))\" height=\"8\" fill=\"\(stateColor(band.state, report.spec(of: client)))\"/>"
        }
        var ticks: Set<Double> = []
        for finding in client.findings where ticks.insert(unit(finding.t)).inserted {
            out += "<rect x=\"\(format1(max(0, unit(finding.t) - 1)))\" y=\"0\" width=\"3\" height=\"12\" fill=\"\(finding.severity == .error ? "#b71c1c" : "#e65100")\"/>"
        }
        return out + "</svg>"
    }

    /// A row of the findings-by-rule table.
    struct RuleAndSeverity: Hashable {
        var rule: String
        var severity: Severity
    }

    static func clientLink(_ id: String, fragment: String? = nil) -> String {
        "<a href=\"#\(fragment ?? anchor(id))\">\(escapeXML(id))</a>"
    }

    static func controls(_ report: AnalysisReport, into out: inout String, emit: (String) -> Void) {
        var rules: [String] = []
        for f in report.findings where !rules.contains(f.rule) { rules.append(f.rule) }
        out += "<nav id=\"controls\"><span class=\"group\"><b>Show</b> "
        out += "<label><input type=\"checkbox\" id=\"sev-error\" checked> errors</label> "
        out += "<label><input type=\"checkbox\" id=\"sev-warning\" checked> warnings</label> "
        out += "<label>rule <select id=\"rule\"><option value=\"\">all rules</option>"
        for rule in rules.sorted() { out += "<option>\(escapeXML(rule))</option>" }
        out += "</select></label> "
        out += "<label>client <select id=\"client\"><option value=\"\">all clients</option>"
        for client in report.clients.withoutLists {
            out += "<option>\(escapeXML(client.info.id))</option>"
            emitWhenFull(&out, emit)
        }
        out += "</select></label> "
        out += "<label><input type=\"checkbox\" id=\"only-findings\"> only clients with findings</label></span> "
        out += "<span class=\"group\"><b>Time</b> <button id=\"zoom-in\" type=\"button\">zoom in</button>"
        out += "<button id=\"zoom-out\" type=\"button\">zoom out</button><button id=\"zoom-reset\" type=\"button\">whole capture</button> "
        out += "<span id=\"view\">0 – \(seconds(report.endTime)) s</span> <span class=\"hint\">(drag a lane to pan, Ctrl+wheel to zoom)</span></span></nav>\n"
    }

    /// The states of the spec that judged the clients, or, when several specs judged
    /// them (a mixed capture), each spec's states in a group named after it, so every
    /// colour a lane shows is explained. Then the faults that fired and the findings' dots.
    static func legend(_ report: AnalysisReport) -> String {
        var out = "<b>States</b> "
        if report.specsUsed.count > 1 {
            for use in report.specsUsed {
                out += "<span class=\"spec-states\" data-spec=\"\(escapeXML(use.spec.name))\"><code>\(escapeXML(use.spec.name))</code>: "
                out += stateSwatches(use.spec) + "</span>"
            }
        } else {
            out += stateSwatches(report.spec)
        }
        var kinds: [String] = []
        var seenKinds: Set<String> = []
        for client in report.clients.withoutLists {
            for mark in client.faults where seenKinds.insert(faultKind(mark.rule)).inserted { kinds.append(faultKind(mark.rule)) }
        }
        if !kinds.isEmpty {
            out += " <b>Faults</b> "
            for kind in kinds { out += "<span><i class=\"tri\" style=\"border-bottom-color:\(faultColor(kind))\"></i>\(escapeXML(kind))</span>" }
        }
        out += " <b>Findings</b> <span><i class=\"dot\" style=\"background:#c62828\"></i>error</span><span><i class=\"dot\" style=\"background:#e65100\"></i>warning</span>"
        return out
    }

    /// One swatch per state of `spec`, in lifecycle order, each name once.
    static func stateSwatches(_ spec: LifecycleSpec) -> String {
        var names = [spec.states.initial, spec.states.connecting, spec.states.connected]
        names += spec.backoff.phases.map(\.state)
        names += [spec.states.disconnected, spec.states.failed]
        var seen: Set<String> = []
        var out = ""
        for name in names where seen.insert(name).inserted {
            out += "<span><i class=\"sw\" style=\"background:\(stateColor(name, spec))\"></i>\(escapeXML(name))</span>"
        }
        return out
    }

    // MARK: one client

    static func section(_ client: AnalysisReport.Client, report: AnalysisReport, auth: AuthRequestIndex) -> String {
        let id = anchor(client.info.id)
        let groups = FindingGroup.make(client.findings)
        var groupOf: [Int] = Array(repeating: 0, count: client.findings.count)
        for (g, group) in groups.enumerated() { for i in group.indices { groupOf[i] = g + 1 } }
        let errors = client.findings.contains { $0.severity == .error }
        var out = "<section class=\"client\" id=\"\(id)\" data-client=\"\(escapeXML(client.info.id))\" data-findings=\"\(client.findings.count)\">\n"
        out += "<h2>\(escapeXML(client.info.id)) <span class=\"\(errors ? "bad" : client.findings.isEmpty ? "ok" : "warnc")\">\(client.findings.isEmpty ? "no findings" : "\(client.findingCount) finding\(client.findingCount == 1 ? "" : "s")")</span></h2>\n"
        out += "<p class=\"meta\">key \(escapeXML(client.info.key)) · connections \(escapeXML(client.connectionIDs.map(report.connectionLabel).joined(separator: ", ")))"
        if client.omitted.connections > 0 { out += " and \(client.omitted.connections) more" }
        out += " · final state \(escapeXML(client.finalState ?? "-"))</p>\n"
        if let note = TextReport.omittedNote(client.omitted) { out += "<p class=\"meta\">\(escapeXML(note))</p>\n" }
        out += "<div class=\"lanebox\">" + HTMLLane(client: client, spec: report.spec(of: client), end: report.endTime, groupOf: groupOf,
                                                  auth: auth.links(of: client.connectionIDs), replicas: report.replicas).render() + "</div>\n"
        if !client.faults.isEmpty {
            out += "<h3 id=\"faults-\(id)\">Faults fired</h3>\n<ol class=\"faults\">\n"
            for (k, mark) in client.faults.enumerated() {
                let kind = faultKind(mark.rule)
                out += "<li id=\"fault-\(id)-\(k + 1)\"><i class=\"tri\" style=\"border-bottom-color:\(faultColor(kind))\"></i>\(when(mark.t, report))"
                out += "\(mark.conn.map { " conn \($0)" } ?? "") <code>\(escapeXML(mark.rule))</code>: \(escapeXML(mark.detail))</li>\n"
            }
            out += "</ol>\n"
        }
        if !client.undetermined.isEmpty {
            out += "<h3 id=\"open-\(id)\">Undetermined</h3>\n<ul class=\"open\">\n"
            for u in client.undetermined {
                out += "<li>\(when(u.t, report)) conn \(u.conn) <code>\(escapeXML(u.rule))</code>: \(escapeXML(u.message))</li>\n"
            }
            out += "</ul>\n"
        }
        if !groups.isEmpty {
            out += "<h3>Findings</h3>\n<ol class=\"findings\">\n"
            for (g, group) in groups.enumerated() {
                let first = client.findings[group.indices[0]]
                out += "<li class=\"finding\" id=\"f-\(id)-\(g + 1)\" value=\"\(g + 1)\" data-sev=\"\(first.severity.rawValue)\" data-rule=\"\(escapeXML(first.rule))\">"
                out += "<span class=\"sev-\(first.severity.rawValue)\">\(first.severity.rawValue)</span> <code>\(escapeXML(first.rule))</code>"
                if group.indices.count > 1 { out += " <span class=\"count\">×\(group.indices.count)</span>" }
                out += " \(escapeXML(first.message))"
                if first.party == .server { out += " <em>(server)</em>" }
                if let fault = first.causedByFault { out += " <span class=\"fault\">caused by injected fault <code>\(escapeXML(fault))</code></span>" }
                else if let fault = first.afterFault { out += " <span class=\"fault\">after injected fault <code>\(escapeXML(fault))</code></span>" }
                out += "<div class=\"when\">" + group.indices.map { i in
                    let f = client.findings[i]
                    return "conn \(f.conn) at \(when(f.t, report))"
                }.joined(separator: "; ") + "</div>"
                for e in first.evidence {
                    out += "<div class=\"evidence\">conn \(e.conn) · \(seconds(e.t)) s · \(e.from?.rawValue ?? "-") · \(escapeXML(e.summary))</div>"
                }
                out += "</li>\n"
            }
            out += "</ol>\n"
        }
        out += "</section>\n"
        return out
    }

    // MARK: shared helpers

    static func anchor(_ id: String) -> String {
        "lane-" + String(id.map { $0.isLetter || $0.isNumber || $0 == "-" ? $0 : "_" })
    }

    /// Distinct colours for every state name of the built-in specs; others by phase.
    static func stateColor(_ state: String, _ spec: LifecycleSpec) -> String {
        switch state {
        case spec.states.connected: return "#2e7d32"
        case spec.states.connecting: return "#f9a825"
        case spec.states.failed: return "#c62828"
        case spec.states.disconnected: return "#5c6bc0"
        case spec.states.initial: return "#90a4ae"
        case "suspended": return "#8d6e63"
        default: return "#ef6c00"
        }
    }

    /// "stall-pongs" from "stall-pongs,conn=1", "close" from "close:4009,after=3s".
    static func faultKind(_ rule: String) -> String {
        String(rule.prefix { $0 != ":" && $0 != "," && $0 != " " })
    }

    static func faultColor(_ kind: String) -> String {
        switch kind {
        case "stall-pongs": return "#8e24aa"
        case "close": return "#d81b60"
        case "drop": return "#00838f"
        case "reset": return "#6d4c41"
        case "blackhole": return "#37474f"
        case "latency": return "#3949ab"
        case "activity-timeout": return "#7cb342"
        case "refuse", "refuse-http": return "#5e35b1"
        case "strip-socket-id": return "#00897b"
        case "inject": return "#f4511e"
        default:
            let palette = ["#6a1b9a", "#ad1457", "#00695c", "#4527a0", "#9e9d24", "#283593"]
            let sum = kind.unicodeScalars.reduce(0) { ($0 &* 31 &+ Int($1.value)) & 0xFFFF }
            return palette[sum % palette.count]
        }
    }

    /// 1, 2 or 5 times a power of ten, in seconds, near `micros`.
    static func niceStep(_ micros: Double) -> Double {
        let s = max(micros / 1_000_000, 0.001)
        var p = 1.0
        while p * 10 <= s { p *= 10 }
        while p > s { p /= 10 }
        for m in [1.0, 2.0, 5.0, 10.0] where p * m >= s { return p * m }
        return p * 10
    }

    static func format1(_ d: Double) -> String {
        let v = (d * 10).rounded() / 10
        return v == v.rounded() && abs(v) < 1e15 ? String(Int64(v)) : String(v)
    }
}

/// Findings of one client that say the same thing (rule, severity, message, fault), listed
/// once with a count; `indices` point into the client's findings, in order.
struct FindingGroup {
    var indices: [Int]

    static func make(_ findings: [Finding]) -> [FindingGroup] {
        var groups: [FindingGroup] = []
        var index: [String: Int] = [:]
        for (i, f) in findings.enumerated() {
            let key = "\(f.rule)\u{1}\(f.severity.rawValue)\u{1}\(f.message)\u{1}\(f.causedByFault ?? "")\u{1}\(f.afterFault ?? "")"
            if let g = index[key] { groups[g].indices.append(i) } else {
                index[key] = groups.count
                groups.append(FindingGroup(indices: [i]))
            }
        }
        return groups
    }
}
