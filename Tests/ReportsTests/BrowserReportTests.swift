import Testing
import Foundation
import Capture
import Lifecycle
import TestSupport
@testable import Reports
import Vocabulary

/// The HTML report of a many-client capture, opened in headless Chromium (Debian's package,
/// installed by Tools/setup): screenshots at 1400 and 760 px, and layout facts read back from
/// the DOM after the page's script ran (it writes each marker's x into `data-x`).
@Suite(.serialized) struct BrowserReportTests {
    static let chromium = "/usr/bin/chromium"
    static let clients = 12

    /// Twelve clients on one proxy: one fault fires on all of them at 3.000 s, each then
    /// reconnects; every third client also breaks the backoff bound and its private channel
    /// is lost, so several rules fire.
    static func report() throws -> AnalysisReport {
        var s = Session()
        for c in 1...clients {
            s.connect(c, at: Double(c) * 0.05, ip: "10.0.0.\(c)")
            s.subscribe(c, at: 0.5 + Double(c) * 0.01, "private-\(c)")
        }
        for c in 1...clients {
            s.records.append(.fault(FaultRecord(conn: c, t: Session.us(3), rule: "drop,after=3s", kind: "drop",
                                                target: .client, detail: "ended both connections with FIN")))
            s.end(c, at: 3)
        }
        for c in 1...clients {
            let late = c % 3 == 0
            s.connect(clients + c, at: late ? 6.5 : 3.4 + Double(c) * 0.01, ip: "10.0.0.\(c)")
            if !late { s.subscribe(clients + c, at: 4 + Double(c) * 0.01, "private-\(c)") }
        }
        return try s.report(end: 20, startedAt: 1_764_455_426_983_000)
    }

    struct Page {
        var dom: String
        /// (lane id, data-t, data-x) of every marker.
        var markers: [(lane: String, t: Micros, x: Double, kind: String)]
        var laneWidths: [Double]
        var summaryRules: Set<String>
    }

    func render(_ html: String, width: Int, in dir: URL, name: String) throws -> Page {
        let page = dir.appendingPathComponent("report.html")
        try html.write(to: page, atomically: true, encoding: .utf8)
        let common = ["--headless", "--no-sandbox", "--disable-gpu", "--hide-scrollbars", "--user-data-dir=\(dir.path)/profile-\(width)",
                      "--window-size=\(width),900"]
        let shot = dir.appendingPathComponent("\(name)-\(width).png").path
        let s = try runCommand(Self.chromium, common + ["--screenshot=\(shot)", page.absoluteString], timeout: 180)
        #expect(s.status == 0, "chromium --screenshot: \(s.stderr)")
        #expect(FileManager.default.fileExists(atPath: shot), "no screenshot at \(shot)")
        let d = try runCommand(Self.chromium, common + ["--dump-dom", page.absoluteString], timeout: 180)
        #expect(d.status == 0, "chromium --dump-dom: \(d.stderr)")
        return Page(dom: d.stdout, markers: Self.markers(d.stdout), laneWidths: Self.laneWidths(d.stdout),
                    summaryRules: Self.matches(#"<tr data-rule="([^"]+)""#, in: d.stdout))
    }

    static func markers(_ dom: String) -> [(lane: String, t: Micros, x: Double, kind: String)] {
        var out: [(String, Micros, Double, String)] = []
        var lane = ""
        for line in dom.split(separator: "\n") {
            if let id = firstMatch(#"<svg class="lane" id="svg-([^"]+)""#, in: String(line)) { lane = id }
            for m in allMatches(#"<g class="mk (fault|finding)" data-t="(\d+)"[^>]*data-x="([0-9.]+)""#, in: String(line)) {
                if let t = Micros(m[1]), let x = Double(m[2]) { out.append((lane, t, x, m[0])) }
            }
        }
        return out
    }

    static func laneWidths(_ dom: String) -> [Double] {
        allMatches(#"<svg class="lane" id="[^"]+" width="([0-9.]+)""#, in: dom).compactMap { Double($0[0]) }
    }

    static func matches(_ pattern: String, in text: String) -> Set<String> {
        Set(allMatches(pattern, in: text).map { $0[0] })
    }

    static func firstMatch(_ pattern: String, in text: String) -> String? { allMatches(pattern, in: text).first?.first }

    static func allMatches(_ pattern: String, in text: String) -> [[String]] {
        guard let re = try? NSRegularExpression(pattern: pattern) else { return [] }
        let ns = text as NSString
        return re.matches(in: text, range: NSRange(location: 0, length: ns.length)).map { m in
            (1..<m.numberOfRanges).map { ns.substring(with: m.range(at: $0)) }
        }
    }

    @Test func manyClientReportLaysOutOnOneTimeAxisAt1400And760() throws {
        #expect(FileManager.default.isExecutableFile(atPath: Self.chromium), "chromium is missing: run Tools/setup")
        guard FileManager.default.isExecutableFile(atPath: Self.chromium) else { return }
        let report = try Self.report()
        let fired = Set(report.findings.map(\.rule))
        #expect(fired.count >= 2, "the fixture should fire several rules: \(fired)")
        let dir = TestEnvironment.temporaryDirectory("browser-report")
        let html = HTMLReport.render(report)
        for width in [1400, 760] {
            let page = try render(html, width: width, in: dir, name: "many-clients")
            #expect(page.dom.contains("data-layout=\"done\""), "the page's script did not run at \(width) px")
            // The same instant sits at the same x in every lane: the drop at 3 s.
            let drops = page.markers.filter { $0.kind == "fault" && $0.t == Session.us(3) }
            #expect(Set(drops.map(\.lane)).count == Self.clients, "at \(width) px: \(drops.count) drop markers")
            let xs = Set(drops.map { ($0.x * 10).rounded() })
            #expect(xs.count == 1, "at \(width) px the 3 s drop sits at x \(xs.sorted()) in different lanes")
            // And x grows with time the same way in every lane (one shared axis).
            let byLane = Dictionary(grouping: page.markers, by: \.lane)
            for (_, marks) in byLane {
                for (a, b) in zip(marks, marks.dropFirst()) where a.kind == b.kind && a.t < b.t { #expect(a.x <= b.x) }
            }
            // Laid out at the window's width, not scaled down from a wider drawing.
            #expect(page.laneWidths.count == Self.clients)
            #expect(page.laneWidths.allSatisfy { $0 <= Double(width) && $0 >= Double(width) * 0.7 }, "lane widths \(page.laneWidths)")
            // The summary lists every rule that fired.
            #expect(page.summaryRules == fired, "summary rules \(page.summaryRules) vs fired \(fired)")
        }
        print("browser report screenshots: \(dir.path)/many-clients-1400.png, many-clients-760.png")
    }

    /// One client whose connections end 50 ms apart (their end labels would overlap), with a
    /// 0.35 s wait between connections (its label would be lost) and a fault 0.1 s before the
    /// capture's end (its label would be cut at the right edge); a second client with no
    /// findings and no faults.
    static func crowdedReport() throws -> AnalysisReport {
        var s = Session()
        s.connect(1, at: 0.1)
        s.end(1, at: 1.0)
        s.connect(2, at: 1.02)
        s.end(2, at: 1.05)
        s.connect(3, at: 1.4)
        s.records.append(.fault(FaultRecord(conn: 3, t: Session.us(19.9), rule: "stall-pongs,conn=3", kind: "stall-pongs",
                                            target: .client, detail: "swallowing the server's pongs")))
        s.end(3, at: 19.96)
        s.connect(4, at: 0.2, ip: "10.0.0.2")
        return try s.report(end: 20)
    }

    @Test func labelsFitTheirLanesAndEmptyRowsAreLeftOut() throws {
        guard FileManager.default.isExecutableFile(atPath: Self.chromium) else {
            Issue.record("chromium is missing: run Tools/setup")
            return
        }
        let report = try Self.crowdedReport()
        let dir = TestEnvironment.temporaryDirectory("browser-report-labels")
        for width in [1400, 760] {
            let dom = try render(HTMLReport.render(report), width: width, in: dir, name: "crowded").dom
            #expect(dom.contains("data-layout=\"done\""))
            // Visible end labels never overlap: each starts after the one before ends.
            var labelsEnd = -Double.infinity
            var shown = 0
            for m in Self.allMatches(#"<text class="ce" ([^>]*)>([^<]*)</text>"#, in: dom) {
                guard !m[0].contains("visibility=\"hidden\""), let x = Self.firstMatch(#"x="([0-9.]+)""#, in: m[0]).flatMap(Double.init) else { continue }
                let width = Double(m[1].count) * 7
                let start = m[0].contains("text-anchor=\"end\"") ? x - width : x - width / 2
                #expect(start >= labelsEnd - 0.5, "end label '\(m[1])' at \(x) overlaps the one before at \(width) px")
                labelsEnd = start + width
                shown += 1
            }
            #expect(shown >= 2, "end labels shown: \(shown)")
            // The fault near the right edge writes its kind to the left of its triangle.
            let fault = try #require(Self.firstMatch(#"(<g class="mk fault"[^>]*>.*?</text>)"#, in: dom))
            #expect(fault.contains("text-anchor=\"end\""), "at \(width) px: \(fault)")
            // Every state band wide enough for a letter has a visible label, shortened when
            // it must be (bands of a few milliseconds are narrower than a pixel here).
            let states = Self.allMatches(#"<g class="st"[^>]*><rect ([^>]*)>(?:</rect>)?<text ([^>]*)>([^<]*)</text>"#, in: dom)
            #expect(states.count >= 4)
            var shortened = 0
            for m in states {
                guard let band = Self.firstMatch(#"width="([0-9.]+)""#, in: m[0]).flatMap(Double.init), band >= 16 else { continue }
                #expect(!m[1].contains("visibility=\"hidden\""), "a \(band) px state lost its label at \(width) px: \(m)")
                let name = Self.firstMatch(#"data-name="([^"]+)""#, in: m[1]) ?? ""
                if m[2] != name { shortened += 1 }
            }
            if width == 1400 { #expect(shortened >= 1, "no shortened state label: \(states)") }
            // The client with neither faults nor findings has no rows for them.
            #expect(dom.components(separatedBy: ">findings</text>").count - 1 == 0)
            #expect(dom.components(separatedBy: ">faults</text>").count - 1 == 1)
            // The clients table shows every client's lane in one line.
            #expect(dom.components(separatedBy: "<svg class=\"mini\"").count - 1 == report.clients.count)
        }
    }
}
