import Capture
import Lifecycle

/// One self-contained HTML page: a summary, then per client a swim-lane SVG (states over
/// time, connections as bars, close codes and faults as markers, findings as dots linked
/// to their entry in the list below and back), then the findings list.
public enum HTMLReport {
    static let left = 120.0
    static let plotWidth = 1040.0
    static let width = left + plotWidth + 20

    public static func render(_ report: AnalysisReport) -> String {
        var out = """
            <!DOCTYPE html>
            <html lang="en"><head><meta charset="utf-8">
            <title>faultline analysis: \(escapeXML(report.spec.name))</title>
            <style>
            body{font:14px/1.45 system-ui,-apple-system,"Segoe UI",sans-serif;margin:24px;color:#222;background:#fafafa}
            h1{font-size:20px;margin:0 0 4px} h2{font-size:16px;margin:28px 0 4px}
            .meta{color:#555;margin:2px 0} .summary{font-weight:600;margin:8px 0 16px}
            .ok{color:#2e7d32} .bad{color:#c62828}
            section{background:#fff;border:1px solid #ddd;border-radius:6px;padding:12px 16px;margin-bottom:18px}
            svg{display:block;width:100%;height:auto;background:#fff}
            svg text{font:11px system-ui,sans-serif} .lane-label{font-weight:600;fill:#444}
            ol.findings{margin:8px 0 0 0;padding-left:22px} ol.findings li{margin:4px 0}
            li:target{background:#fff3c4} .sev-error{color:#c62828;font-weight:600} .sev-warning{color:#ef6c00;font-weight:600}
            .evidence{color:#666;font-size:12px;margin-left:8px} .fault{color:#6a1b9a}
            .legend span{display:inline-block;margin-right:14px} .sw{display:inline-block;width:12px;height:12px;vertical-align:-2px;margin-right:4px;border-radius:2px}
            code{background:#f0f0f0;padding:0 3px;border-radius:3px}
            </style></head><body>
            <h1>faultline analysis — spec <code>\(escapeXML(report.spec.name))</code></h1>
            <p class="meta">input: \(escapeXML(report.inputs.joined(separator: ", ")))\(report.prefix.map { " · prefix <code>\(escapeXML($0))</code>" } ?? "")</p>
            <p class="meta">grouping: \(escapeXML(report.grouping))</p>
            <p class="summary \(report.errorCount > 0 ? "bad" : "ok")">\(escapeXML(report.summaryLine))</p>
            <p class="legend">\(legend(report.spec))</p>

            """
        for warning in report.warnings { out += "<p class=\"meta\">warning: \(escapeXML(warning))</p>\n" }
        // Finding n (from 1, report order) is `finding-n` in the list and `marker-n` on the lane;
        // a client's findings are its subsequence of the report's, in the same order.
        var numbers: [String: [Int]] = [:]
        for (i, f) in report.findings.enumerated() { numbers[f.client, default: []].append(i + 1) }
        for client in report.clients {
            out += "<section id=\"\(anchor(client.info.id))\">\n<h2>\(escapeXML(client.info.id))</h2>\n"
            out += "<p class=\"meta\">key: \(escapeXML(client.info.key)) · connections: \(client.connectionIDs.map(String.init).joined(separator: ", "))"
            if client.omitted.connections > 0 { out += " and \(client.omitted.connections) more" }
            out += " · final state: \(escapeXML(client.finalState ?? "-"))</p>\n"
            if let note = TextReport.omittedNote(client.omitted) { out += "<p class=\"meta\">\(escapeXML(note))</p>\n" }
            let clientNumbers = numbers[client.info.id] ?? []
            out += lane(client, spec: report.spec, numbers: clientNumbers,
                        auth: report.authRequests.filter { client.connectionIDs.contains($0.conn) })
            if client.findings.isEmpty {
                out += "<p class=\"ok\">no findings</p>\n"
            } else {
                out += "<ol class=\"findings\">\n"
                for (k, f) in client.findings.enumerated() {
                    let n = k < clientNumbers.count ? clientNumbers[k] : 0
                    out += "<li id=\"finding-\(n)\" value=\"\(n)\"><a href=\"#marker-\(n)\">\(seconds(f.t)) s</a> "
                    out += "<span class=\"sev-\(f.severity.rawValue)\">\(f.severity.rawValue)</span> <code>\(escapeXML(f.rule))</code>"
                    out += " conn \(f.conn): \(escapeXML(f.message))"
                    if f.party == .server { out += " <em>(server)</em>" }
                    if let fault = f.causedByFault { out += " <span class=\"fault\">caused by injected fault <code>\(escapeXML(fault))</code></span>" }
                    for e in f.evidence {
                        out += "<div class=\"evidence\">conn \(e.conn) · \(seconds(e.t)) s · \(e.from?.rawValue ?? "-") · \(escapeXML(e.summary))</div>"
                    }
                    out += "</li>\n"
                }
                out += "</ol>\n"
            }
            out += "</section>\n"
        }
        out += "</body></html>\n"
        return out
    }

    static func anchor(_ id: String) -> String {
        "lane-" + String(id.map { $0.isLetter || $0.isNumber || $0 == "-" ? $0 : "_" })
    }

    static func color(_ state: String, _ spec: LifecycleSpec) -> String {
        switch state {
        case spec.states.connected: "#43a047"
        case spec.states.connecting: "#fbc02d"
        case spec.states.failed: "#e53935"
        case spec.states.initial, spec.states.disconnected: "#b0bec5"
        default: "#fb8c00"
        }
    }

    static func legend(_ spec: LifecycleSpec) -> String {
        var names = [spec.states.initial, spec.states.connecting, spec.states.connected]
        names += spec.backoff.phases.map(\.state)
        names += [spec.states.disconnected, spec.states.failed]
        var seen: Set<String> = []
        var out = ""
        for name in names where seen.insert(name).inserted {
            out += "<span><i class=\"sw\" style=\"background:\(color(name, spec))\"></i>\(escapeXML(name))</span>"
        }
        out += "<span>▲ <span class=\"fault\">fault</span></span><span>● finding</span><span>| close code</span>"
        return out
    }

    static func lane(_ client: AnalysisReport.Client, spec: LifecycleSpec, numbers: [Int],
                     auth: [AuthRequestLink] = []) -> String {
        let start = auth.map(\.t).reduce(client.info.firstSeen, min)
        var end = start
        for t in client.transitions { end = max(end, t.t) }
        for c in client.connections { end = max(end, c.endedAt ?? c.openedAt) }
        for f in client.findings { end = max(end, f.t) }
        for f in client.faults { end = max(end, f.t) }
        let span = Double(max(end - start, 1_000_000)) * 1.04
        func x(_ t: Micros) -> Double { left + Double(t - start) / span * plotWidth }
        func fmt(_ d: Double) -> String { format1(d) }
        let height = 150.0
        var svg = "<svg viewBox=\"0 0 \(fmt(width)) \(fmt(height))\" xmlns=\"http://www.w3.org/2000/svg\" role=\"img\" aria-label=\"timeline of \(escapeXML(client.info.id))\">\n"
        // Time axis with about eight ticks.
        let step = niceStep(span / 8)
        // Ticks at round times of the capture, not offsets from the client's start.
        let startSeconds = Double(start) / 1_000_000
        var tick = (startSeconds / step).rounded(.up) * step
        while tick <= startSeconds + span / 1_000_000 {
            let tx = left + (tick - startSeconds) * 1_000_000 / span * plotWidth
            svg += "<line x1=\"\(fmt(tx))\" y1=\"18\" x2=\"\(fmt(tx))\" y2=\"\(fmt(height - 8))\" stroke=\"#eee\"/>"
            svg += "<text x=\"\(fmt(tx))\" y=\"12\" text-anchor=\"middle\" fill=\"#888\">\(format1(tick)) s</text>\n"
            tick += step
        }
        svg += "<text class=\"lane-label\" x=\"8\" y=\"40\">state</text>"
        svg += "<text class=\"lane-label\" x=\"8\" y=\"80\">connections</text>"
        svg += "<text class=\"lane-label\" x=\"8\" y=\"122\">faults, findings</text>\n"
        // States as bands.
        for (i, t) in client.transitions.enumerated() {
            let until = i + 1 < client.transitions.count ? client.transitions[i + 1].t : end
            let x0 = x(t.t), w = max(1.5, x(until) - x0)
            svg += "<rect x=\"\(fmt(x0))\" y=\"26\" width=\"\(fmt(w))\" height=\"22\" fill=\"\(color(t.to, spec))\">"
            svg += "<title>\(escapeXML(t.to)) from \(seconds(t.t)) s (\(escapeXML(t.cause)))</title></rect>"
            if w > Double(t.to.count) * 6.5 + 6 {
                svg += "<text x=\"\(fmt(x0 + 4))\" y=\"41\" fill=\"#fff\" style=\"font-weight:600\">\(escapeXML(t.to))</text>"
            }
            svg += "\n"
        }
        // Connections as bars: thin while connecting, full once connected; close code at the end.
        for c in client.connections {
            let x0 = x(c.openedAt), x1 = x(c.endedAt ?? end)
            svg += "<rect x=\"\(fmt(x0))\" y=\"70\" width=\"\(fmt(max(1.5, x1 - x0)))\" height=\"14\" fill=\"#90caf9\" rx=\"2\">"
            svg += "<title>conn \(c.conn): \(seconds(c.openedAt)) s to \(seconds(c.endedAt ?? end)) s, \(escapeXML(c.end ?? "open"))</title></rect>"
            if let connected = c.connectedAt {
                let cx = x(connected)
                svg += "<rect x=\"\(fmt(cx))\" y=\"70\" width=\"\(fmt(max(1.5, x1 - cx)))\" height=\"14\" fill=\"#1e88e5\" rx=\"2\"/>"
            }
            if x1 - x0 > 30 { svg += "<text x=\"\(fmt(x0 + 3))\" y=\"81\" fill=\"#fff\">#\(c.conn)</text>" }
            let endLabel = c.closeCode.map { "\($0)" } ?? (c.end.map { $0.hasPrefix("RST") ? "RST" : $0.hasPrefix("FIN") ? "FIN" : "" } ?? "")
            svg += "<line x1=\"\(fmt(x1))\" y1=\"66\" x2=\"\(fmt(x1))\" y2=\"88\" stroke=\"#37474f\" stroke-width=\"2\"/>"
            if !endLabel.isEmpty {
                svg += "<text x=\"\(fmt(x1))\" y=\"100\" text-anchor=\"middle\" fill=\"#37474f\">\(escapeXML(endLabel))</text>"
            }
            svg += "\n"
        }
        // Faults as purple triangles.
        for f in client.faults {
            let fx = x(f.t)
            svg += "<path d=\"M\(fmt(fx - 6)) 128 L\(fmt(fx + 6)) 128 L\(fmt(fx)) 116 Z\" fill=\"#8e24aa\">"
            svg += "<title>fault \(escapeXML(f.rule)) at \(seconds(f.t)) s: \(escapeXML(f.detail))</title></path>\n"
        }
        // Channel-auth requests (forward mode) as green squares on the connections row, a
        // dashed line to the subscribe that used their signature.
        for a in auth {
            let ax = x(a.t), sx = x(a.subscribeT)
            svg += "<line x1=\"\(fmt(ax))\" y1=\"92\" x2=\"\(fmt(sx))\" y2=\"92\" stroke=\"#2e7d32\" stroke-dasharray=\"2 2\"/>"
            svg += "<rect x=\"\(fmt(ax - 4))\" y=\"88\" width=\"8\" height=\"8\" fill=\"#2e7d32\"><title>auth request "
            svg += "\(escapeXML(a.method)) \(escapeXML(a.url)) -> \(a.status.map(String.init) ?? "no response") at \(seconds(a.t)) s; "
            svg += "its signature used by the subscribe\(escapeXML(a.channel.map { " to \($0)" } ?? "")) on conn \(a.conn) at \(seconds(a.subscribeT)) s</title></rect>\n"
        }
        // Findings as numbered dots linking to the list.
        for (k, f) in client.findings.enumerated() {
            let n = k < numbers.count ? numbers[k] : 0
            let fx = x(f.t)
            let fill = f.severity == .error ? "#c62828" : "#ef6c00"
            svg += "<a href=\"#finding-\(n)\" id=\"marker-\(n)\"><line x1=\"\(fmt(fx))\" y1=\"26\" x2=\"\(fmt(fx))\" y2=\"110\" stroke=\"\(fill)\" stroke-dasharray=\"3 2\"/>"
            svg += "<circle cx=\"\(fmt(fx))\" cy=\"138\" r=\"8\" fill=\"\(fill)\"><title>\(escapeXML(f.rule)): \(escapeXML(f.message))</title></circle>"
            svg += "<text x=\"\(fmt(fx))\" y=\"142\" text-anchor=\"middle\" fill=\"#fff\" style=\"font-weight:700;font-size:10px\">\(n)</text></a>\n"
        }
        svg += "</svg>\n"
        return svg
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
        return v == v.rounded() ? String(Int64(v)) : String(v)
    }
}
