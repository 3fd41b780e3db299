import Capture
import Lifecycle
import Vocabulary

/// One client's swim lane as SVG, on the time axis every lane shares (0 to the end of the
/// capture): states as bands, connections as bars with their end, faults and findings as
/// markers. Each drawn item carries its times (`data-t`, `data-t0`, `data-t1`) so the page's
/// script can lay the lanes out again at the window's width and on zoom; the positions
/// written here are that same layout at `HTMLLane.width`, for a page read without scripts.
struct HTMLLane {
    static let width = 1180.0
    static let left = 132.0
    static let right = 16.0
    /// Rows (y of their top); the faults and findings rows are drawn only when the client
    /// has some, so their y depends on the lane (`faultY`, `findingY`, `height`).
    static let stateY = 24.0, connY = 58.0, markerRowsY = 104.0, markerRowHeight = 54.0
    static let levelStep = 17.0, levels = 3
    /// A state lasting a millisecond still shows.
    static let minWidth = 3.0

    let client: AnalysisReport.Client
    let spec: LifecycleSpec
    let end: Micros
    /// Group number (per client, from 1) of each finding of `client.findings`.
    let groupOf: [Int]
    /// Forward mode: the channel-auth requests whose signatures this client's subscribes used.
    var auth: [AuthRequestLink] = []
    /// A fleet's connections' replicas (`AnalysisReport.replicas`), shown on each bar.
    var replicas: [ConnectionID: String] = [:]

    var faultY: Double { Self.markerRowsY }
    var findingY: Double { Self.markerRowsY + (client.faults.isEmpty ? 0 : Self.markerRowHeight) }
    var height: Double { findingY + (client.findings.isEmpty ? 0 : Self.markerRowHeight) }

    var span: Double { Double(max(end, 1_000_000)) }
    func x(_ t: Micros) -> Double {
        Self.left + Double(min(max(t, 0), end)) / span * (Self.width - Self.left - Self.right)
    }

    func render() -> String {
        let id = HTMLReport.anchor(client.info.id)
        var svg = "<svg class=\"lane\" id=\"svg-\(id)\" width=\"\(f(Self.width))\" height=\"\(f(height))\" viewBox=\"0 0 \(f(Self.width)) \(f(height))\" data-fault-y=\"\(f(faultY))\" data-finding-y=\"\(f(findingY))\" xmlns=\"http://www.w3.org/2000/svg\" role=\"img\" aria-label=\"timeline of \(esc(client.info.id))\">\n"
        svg += "<defs><clipPath id=\"clip-\(id)\"><rect class=\"plotclip\" x=\"\(f(Self.left - 8))\" y=\"0\" width=\"\(f(Self.width - Self.left - Self.right + 16))\" height=\"\(f(height))\"/></clipPath></defs>\n"
        svg += "<g class=\"labels\"><text class=\"row\" x=\"6\" y=\"\(f(Self.stateY + 15))\">state</text>"
        svg += "<text class=\"row\" x=\"6\" y=\"\(f(Self.connY + 12))\">connections</text>"
        if !client.faults.isEmpty { svg += "<text class=\"row\" x=\"6\" y=\"\(f(faultY + 4))\">faults</text>" }
        if !client.findings.isEmpty { svg += "<text class=\"row\" x=\"6\" y=\"\(f(findingY + 4))\">findings</text>" }
        svg += "</g>\n"
        svg += "<g class=\"axis\">\(ticks())</g>\n"
        svg += "<g class=\"plot\" clip-path=\"url(#clip-\(id))\">\n"
        svg += states() + connections() + authRequests() + faults() + findings()
        svg += "</g></svg>\n"
        return svg
    }

    private func ticks() -> String {
        let plot = Self.width - Self.left - Self.right
        let step = HTMLReport.niceStep(span / (plot / 110))
        var out = ""
        var tick = 0.0
        while tick * 1_000_000 <= span {
            let tx = Self.left + tick * 1_000_000 / span * plot
            out += "<line class=\"tick\" x1=\"\(f(tx))\" y1=\"16\" x2=\"\(f(tx))\" y2=\"\(f(height - 4))\"/>"
            out += "<text class=\"tick\" x=\"\(f(tx))\" y=\"12\" text-anchor=\"middle\">\(HTMLReport.format1(tick)) s</text>"
            tick += step
        }
        return out
    }

    /// Bands from each transition to the next; the last one runs to the end of the capture.
    private func states() -> String {
        var out = ""
        for (i, t) in client.transitions.enumerated() {
            let until = i + 1 < client.transitions.count ? client.transitions[i + 1].t : end
            let x0 = x(t.t), w = max(Self.minWidth, x(until) - x0)
            out += "<g class=\"st\" data-t0=\"\(t.t)\" data-t1=\"\(until)\" data-state=\"\(esc(t.to))\">"
            out += "<rect x=\"\(f(x0))\" y=\"\(f(Self.stateY))\" width=\"\(f(w))\" height=\"22\" fill=\"\(HTMLReport.stateColor(t.to, spec))\"/>"
            let label = Self.stateLabel(t.to, fitting: w)
            out += "<text x=\"\(f(x0 + 4))\" y=\"\(f(Self.stateY + 15))\" data-name=\"\(esc(t.to))\"\(label == nil ? " visibility=\"hidden\"" : "")>\(esc(label ?? t.to))</text>"
            out += "<title>\(esc(t.to)) from \(seconds(t.t)) s to \(seconds(until)) s (\(esc(t.cause)))</title></g>\n"
        }
        return out
    }

    /// A state's name as it fits in a band `width` wide: whole, cut to its first letters
    /// and an ellipsis, or its first letter alone (the band's tooltip has it whole); nil when
    /// not even that fits. The page's script applies the same rule after each layout.
    static func stateLabel(_ name: String, fitting width: Double) -> String? {
        func fits(_ count: Int) -> Bool { width > Double(count) * 7.5 + 8 }
        if fits(name.count) { return name }
        let letters = Int((width - 8) / 7.5) - 1
        if letters >= 3 { return String(name.prefix(letters)) + "…" }
        return fits(1) ? String(name.prefix(1)) : nil
    }

    /// A light bar while connecting, a dark one once connected, a tick and label at the end.
    private func connections() -> String {
        var out = ""
        // Where the last close label shown ends: a label that would overlap it is hidden
        // (the connection's tooltip still says how it ended).
        var labelsEnd = -Double.infinity
        for c in client.connections {
            let stop = c.endedAt ?? end
            let x0 = x(c.openedAt), x1 = x(stop)
            out += "<g class=\"cb\" data-t0=\"\(c.openedAt)\" data-t1=\"\(stop)\" data-conn=\"\(c.conn)\">"
            out += "<rect class=\"opening\" x=\"\(f(x0))\" y=\"\(f(Self.connY))\" width=\"\(f(max(Self.minWidth, x1 - x0)))\" height=\"16\" rx=\"2\"/>"
            if let connected = c.connectedAt {
                let cx = x(connected)
                out += "<rect class=\"open\" data-t0=\"\(connected)\" x=\"\(f(cx))\" y=\"\(f(Self.connY))\" width=\"\(f(max(Self.minWidth, x1 - cx)))\" height=\"16\" rx=\"2\"/>"
            }
            out += "<text class=\"cn\" x=\"\(f(x0 + 3))\" y=\"\(f(Self.connY + 12))\"\(x1 - x0 > 30 ? "" : " visibility=\"hidden\"")>#\(c.conn)\(replicas[c.conn].map { "@" + esc($0) } ?? "")</text>"
            let label = c.closeCode.map { "\($0)" } ?? (c.end.map { $0.hasPrefix("RST") ? "RST" : $0.hasPrefix("FIN") ? "FIN" : "" } ?? "")
            out += "<line class=\"ce\" x1=\"\(f(x1))\" y1=\"\(f(Self.connY - 4))\" x2=\"\(f(x1))\" y2=\"\(f(Self.connY + 20))\"/>"
            if !label.isEmpty {
                // At the right edge the label ends at its tick instead of being cut in half.
                let atEdge = x1 > Self.width - Self.right - 16
                let half = Double(label.count) * 3.5 + 2
                let from = atEdge ? x1 - 2 * half : x1 - half
                let shown = from >= labelsEnd
                if shown { labelsEnd = from + 2 * half }
                out += "<text class=\"ce\" x=\"\(f(x1))\" y=\"\(f(Self.connY + 32))\" text-anchor=\"\(atEdge ? "end" : "middle")\"\(shown ? "" : " visibility=\"hidden\"")>\(esc(label))</text>"
            }
            out += "<title>conn \(c.conn)\(replicas[c.conn].map { " on replica " + esc($0) } ?? ""): \(seconds(c.openedAt)) s to \(seconds(stop)) s, \(esc(c.end ?? "open"))</title></g>\n"
        }
        return out
    }

    /// Channel-auth requests (forward mode): a green square under the connections row, with
    /// a dashed line to the subscribe that used their signature.
    private func authRequests() -> String {
        var out = ""
        let y = Self.connY + 24
        for a in auth {
            let ax = x(a.t), sx = x(a.subscribeT)
            out += "<line x1=\"\(f(ax))\" y1=\"\(f(y))\" x2=\"\(f(sx))\" y2=\"\(f(y))\" stroke=\"#2e7d32\" stroke-dasharray=\"2 2\"/>"
            out += "<rect class=\"mk auth\" data-t=\"\(a.t)\" x=\"\(f(ax - 4))\" y=\"\(f(y - 4))\" width=\"8\" height=\"8\" fill=\"#2e7d32\"><title>auth request "
            out += "\(esc(a.method)) \(esc(a.url)) -> \(a.status.map(String.init) ?? "no response") at \(seconds(a.t)) s; "
            out += "its signature used by the subscribe\(esc(a.channel.map { " to \($0)" } ?? "")) on conn \(a.conn) at \(seconds(a.subscribeT)) s</title></rect>\n"
        }
        return out
    }

    /// Faults: a triangle coloured by kind with the kind written beside it; markers that
    /// would overlap go to the next row down, so each keeps its true x.
    private func faults() -> String {
        var out = ""
        var rows = Rows()
        for (k, mark) in client.faults.enumerated() {
            let kind = HTMLReport.faultKind(mark.rule)
            let fx = x(mark.t)
            // Near the right edge the kind is written to the left of its triangle, not cut off.
            let labelWidth = 10 + Double(kind.count) * 7
            let flipped = fx + labelWidth > Self.width - 2
            let level = flipped ? rows.place(from: fx - labelWidth, to: fx + 7) : rows.place(from: fx - 7, to: fx + labelWidth)
            let y = faultY + Double(level) * Self.levelStep
            out += "<a href=\"#fault-\(HTMLReport.anchor(client.info.id))-\(k + 1)\"><g class=\"mk fault\" data-t=\"\(mark.t)\" data-kind=\"\(esc(kind))\" data-w=\"\(10 + kind.count * 7)\" data-x=\"\(f(fx))\" data-level=\"\(level)\" transform=\"translate(\(f(fx)),\(f(y)))\">"
            out += "<path d=\"M-6 6 L6 6 L0 -6 Z\" fill=\"\(HTMLReport.faultColor(kind))\"/>"
            out += "<text x=\"\(flipped ? "-9" : "9")\" y=\"4\"\(flipped ? " text-anchor=\"end\"" : "") fill=\"\(HTMLReport.faultColor(kind))\">\(esc(kind))</text>"
            out += "<title>fault \(esc(mark.rule)) at \(seconds(mark.t)) s: \(esc(mark.detail))</title></g></a>\n"
        }
        return out
    }

    /// Findings: a dot numbered by its group in the list below, linked to it.
    private func findings() -> String {
        var out = ""
        var rows = Rows()
        let id = HTMLReport.anchor(client.info.id)
        for (k, finding) in client.findings.enumerated() {
            let n = k < groupOf.count ? groupOf[k] : 0
            let fx = x(finding.t)
            let level = rows.place(from: fx - 9, to: fx + 9)
            let y = findingY + Double(level) * Self.levelStep
            let fill = finding.severity == .error ? "#c62828" : "#e65100"
            out += "<a href=\"#f-\(id)-\(n)\"><g class=\"mk finding\" data-t=\"\(finding.t)\" data-sev=\"\(finding.severity.rawValue)\" data-rule=\"\(esc(finding.rule))\" data-w=\"18\" data-x=\"\(f(fx))\" data-level=\"\(level)\" transform=\"translate(\(f(fx)),\(f(y)))\">"
            out += "<line class=\"drop\" x1=\"0\" y1=\"\(f(Self.stateY - y))\" x2=\"0\" y2=\"-8\" stroke=\"\(fill)\"/>"
            out += "<circle r=\"8\" fill=\"\(fill)\"/><text y=\"4\" text-anchor=\"middle\">\(n)</text>"
            out += "<title>\(esc(finding.rule)) at \(seconds(finding.t)) s: \(esc(finding.message))</title></g></a>\n"
        }
        return out
    }

    private func f(_ d: Double) -> String { HTMLReport.format1(d) }
    private func esc(_ s: String) -> String { escapeXML(s) }
}

/// Stacks markers in rows: a marker goes to the first row where it overlaps nothing, or
/// to the last row if all are taken (the same rule as the page's script).
struct Rows {
    private var ends: [Double] = Array(repeating: -.infinity, count: HTMLLane.levels)

    mutating func place(from x0: Double, to x1: Double) -> Int {
        var level = ends.firstIndex { $0 <= x0 } ?? ends.count - 1
        if level < 0 { level = 0 }
        ends[level] = max(ends[level], x1)
        return level
    }
}
