import Testing
import Foundation
#if canImport(FoundationXML)
import FoundationXML
#endif
import Capture
import JSON
import Vocabulary
import WebSocket
import Lifecycle
@testable import Reports

/// Two clients: one that retries too late after a drop and again after an injected 4009,
/// and one clean client.
func sampleRecords() -> [CaptureRecord] {
    func us(_ s: Double) -> Micros { Micros(s * 1_000_000) }
    var records: [CaptureRecord] = []
    func connect(_ conn: Int, _ t: Double, ip: String) {
        records.append(.open(OpenRecord(conn: conn, t: us(t), client: "\(ip):5\(conn)", server: "127.0.0.1:80")))
        records.append(.upgrade(UpgradeRecord(conn: conn, t: us(t) + 1000, from: .client, method: "GET",
                                              target: "/app/k?protocol=7", headers: [HeaderField("User-Agent", "ua <&>")])))
        records.append(.upgrade(UpgradeRecord(conn: conn, t: us(t) + 2000, from: .server, status: 101, headers: [])))
        let hs = #"{"event":"bird:connection_established","data":"{\"socket_id\":\"\#(conn).1\"}"}"#
        records.append(.frame(FrameRecord(conn: conn, t: us(t) + 3000, from: .server, opcode: .text, masked: false, payload: Array(hs.utf8))))
    }
    connect(1, 0, ip: "10.0.0.1")
    connect(2, 0.5, ip: "10.0.0.2")
    records.append(.end(EndRecord(conn: 1, t: us(10), side: .server, kind: .rst)))
    connect(3, 14.2, ip: "10.0.0.1")
    records.append(.fault(FaultRecord(conn: 3, t: us(20), rule: "close:4009", kind: "close", target: .client, detail: "sent close 4009")))
    records.append(.frame(FrameRecord(conn: 3, t: us(20), from: .server, opcode: .close, masked: false,
                                      payload: [0x0F, 0xA9], action: .injected, fault: "close:4009")))
    records.append(.end(EndRecord(conn: 3, t: us(20.01), side: .server, kind: .fin)))
    connect(4, 25, ip: "10.0.0.1")
    records.append(.end(EndRecord(conn: 2, t: us(28), side: .client, kind: .fin)))
    return records
}

func sampleReport() throws -> AnalysisReport {
    func us(_ s: Double) -> Micros { Micros(s * 1_000_000) }
    let records = sampleRecords()
    let spec = try SpecLoader.load("bird")
    var analyzer = LiveAnalyzer(options: AnalyzerOptions(spec: spec))
    var builder = ReportBuilder()
    for r in records { builder.add(analyzer.feed(r)) }
    builder.add(analyzer.finish(at: us(30)))
    return builder.build(spec: spec, inputs: ["sample.jsonl"], grouping: ClientKeyMode.standard.description,
                         prefix: analyzer.prefix, endTime: us(30))
}

@Suite struct ReportTests {
    @Test func sampleHasTheExpectedFindings() throws {
        let report = try sampleReport()
        #expect(report.clients.map(\.info.id) == ["client-1", "client-2"])
        #expect(report.findings.map(\.rule) == ["backoff.bound", "failed.retried"])
        #expect(report.findings.last?.afterFault == "close:4009")
        #expect(report.exitStatus == 1)
    }

    @Test func textIsGroupedByClientWithASummaryFirstAndLast() throws {
        let text = TextReport.render(try sampleReport())
        let grouping = try #require(text.range(of: "grouping: source IP"))
        let summary = try #require(text.range(of: "\nsummary: 2 clients, 4 connections: 2 errors, 0 warnings\n  error   backoff.bound   ×1  client-1\n  error   failed.retried  ×1  client-1\n  faults fired: close:4009 ×1\n"))
        let client1 = try #require(text.range(of: "client-1  key 10.0.0.1 | ua <&> | /app/k?protocol=7  connections: 1, 3, 4"))
        let finding = try #require(text.range(of: "    error   backoff.bound  conn 3 at 14.200 s: delay 4.20 s > bound 1.00 s for attempt 1"))
        let client2 = try #require(text.range(of: "client-2  key 10.0.0.2"))
        #expect(grouping.lowerBound < summary.lowerBound && summary.lowerBound < client1.lowerBound)
        #expect(client1.lowerBound < finding.lowerBound && finding.lowerBound < client2.lowerBound)
        #expect(text.contains("connecting -> connected  (handshake socket_id 1.1)"))
        #expect(text.contains("(after injected fault close:4009)"))
        #expect(text.contains("client-2  key 10.0.0.2 | ua <&> | /app/k?protocol=7  connections: 2\n"))
        let lines = text.split(separator: "\n")
        #expect(lines.last == "summary: 2 clients, 4 connections: 2 errors, 0 warnings")
    }

    @Test func identicalFindingsAreFoldedInText() throws {
        let spec = try SpecLoader.load("bird")
        var builder = ReportBuilder()
        builder.add(.client(ClientInfo(id: "client-1", key: "k", firstSeen: 0)))
        for i in 0..<8 {
            builder.add(.finding(Finding(rule: "channels.stale-auth", severity: .error, party: .client, client: "client-1",
                                         conn: 5 + i, t: Micros(i + 1) * 1_000_000,
                                         message: "subscribe private-chat reuses the auth sent on connection 5", evidence: [])))
        }
        let text = TextReport.render(builder.build(spec: spec, inputs: ["x"], grouping: "g", prefix: nil))
        #expect(text.contains("    error   channels.stale-auth ×8  conn 5 at 1.000 s: subscribe private-chat reuses the auth sent on connection 5\n"))
        #expect(text.contains("        also: conn 6 at 2.000 s, conn 7 at 3.000 s, conn 8 at 4.000 s, conn 9 at 5.000 s, conn 10 at 6.000 s, conn 11 at 7.000 s, conn 12 at 8.000 s\n"))
        #expect(text.components(separatedBy: "channels.stale-auth ×8").count - 1 == 1)
        #expect(text.contains("  error   channels.stale-auth  ×8  client-1\n"))
    }

    @Test func absoluteTimesSitBesideRelativeOnesInTextAndJSON() throws {
        var report = try sampleReport()
        report.startedAt = 1_764_455_426_983_000  // 2025-11-29T22:30:26.983Z
        let text = TextReport.render(report)
        #expect(text.contains("capture started 2025-11-29T22:30:26.983Z\n"))
        #expect(text.contains("     14.200 s  22:30:41.183  conn 3    unavailable -> connecting  (tcp open)"))
        #expect(text.contains("conn 3 at 14.200 s (22:30:41.183): delay 4.20 s"))
        let json = try JSONParser.parse(JSONReport.render(report))
        #expect(json["started_at"]?.stringValue == "2025-11-29T22:30:26.983Z")
        #expect(json["findings"]?.arrayValue?.first?["at"]?.stringValue == "2025-11-29T22:30:41.183Z")
        #expect(json["findings"]?.arrayValue?.first?["t"]?.doubleValue == 14.2)
        #expect(json["transitions"]?.arrayValue?.first?["at"]?.stringValue == "2025-11-29T22:30:26.983Z")
        #expect(json["clients"]?.arrayValue?.first?["faults"]?.arrayValue?.first?["at"]?.stringValue == "2025-11-29T22:30:46.983Z")
        // Without a known start the fields are null, never a made-up date.
        let plain = try JSONParser.parse(JSONReport.render(try sampleReport()))
        #expect(plain["started_at"] == .null)
        #expect(plain["findings"]?.arrayValue?.first?["at"] == .null)
    }

    @Test func wallClockHandlesLeapYearsAndRefusesOverflow() {
        #expect(WallClock.iso(0, plus: 0) == "1970-01-01T00:00:00.000Z")
        #expect(WallClock.iso(951_782_400_000_000, plus: 1_500) == "2000-02-29T00:00:00.001Z")
        #expect(WallClock.iso(4_107_542_399_000_000, plus: 999_999) == "2100-02-28T23:59:59.999Z")
        #expect(WallClock.timestamp(1_764_455_426_983_000, plus: 0) == "2025-11-29T22:30:26")
        #expect(WallClock.iso(Int64.max, plus: 1) == nil)
        #expect(WallClock.iso(-5, plus: 0) == nil)
        #expect(WallClock.iso(253_402_300_800_000_000, plus: 0) == nil)
        // The last instant it writes, and each of the shorter forms cut from the same text.
        #expect(WallClock.iso(253_402_300_799_999_999, plus: 0) == "9999-12-31T23:59:59.999Z")
        #expect(WallClock.date(1_764_455_426_983_000) == "2025-11-29")
        #expect(WallClock.timeOfDay(1_764_455_426_983_000, plus: 17_000) == "22:30:27.000")
        #expect(WallClock.timeOfDay(1_764_455_426_983_000, plus: -983_001) == "22:30:25.999")
        #expect(WallClock.date(-1) == nil && WallClock.timeOfDay(Int64.max, plus: 1) == nil)
    }

    @Test func jsonParsesWithTheDocumentedSchema() throws {
        let json = try JSONParser.parse(JSONReport.render(try sampleReport()))
        #expect(json["format"]?.stringValue == "faultline-analysis")
        #expect(json["version"]?.intValue == 1)
        #expect(json["grouping"]?["key"]?.stringValue?.hasPrefix("source IP") == true)
        let groups = try #require(json["grouping"]?["clients"]?.arrayValue)
        #expect(groups.first?["connections"] == [1, 3, 4])
        let clients = try #require(json["clients"]?.arrayValue)
        #expect(clients.count == 2)
        #expect(clients.first?["state"]?.stringValue == "connected")
        #expect(clients.first?["connections"]?.arrayValue?.count == 3)
        #expect(clients.first?["faults"]?.arrayValue?.first?["rule"]?.stringValue == "close:4009")
        let transitions = try #require(json["transitions"]?.arrayValue)
        #expect(transitions.first?["to"]?.stringValue == "initialized")
        #expect(transitions.allSatisfy { $0["client"]?.stringValue != nil && $0["t"]?.doubleValue != nil })
        let findings = try #require(json["findings"]?.arrayValue)
        #expect(findings.count == 2)
        let first = try #require(findings.first)
        #expect(first["rule"]?.stringValue == "backoff.bound")
        #expect(first["severity"]?.stringValue == "error")
        #expect(first["conn"]?.intValue == 3)
        #expect(first["t"]?.doubleValue == 14.2)
        #expect(first["evidence"]?.arrayValue?.count == 2)
        #expect(findings.last?["caused_by_fault"] == .null)
        #expect(findings.last?["after_fault"]?.stringValue == "close:4009")
        let summary = try #require(json["summary"])
        #expect(summary["errors"]?.intValue == 2)
        #expect(summary["exit_status"]?.intValue == 1)
        #expect(summary["connections"]?.intValue == 4)
    }

    @Test func junitHasACasePerClientAndRuleAndFailuresForErrors() throws {
        let report = try sampleReport()
        let xml = JUnitReport.render(report)
        let collector = XMLCollector()
        let parser = XMLParser(data: Data(xml.utf8))
        parser.delegate = collector
        #expect(parser.parse(), "JUnit XML does not parse: \(parser.parserError.map(String.init(describing:)) ?? "")")
        #expect(collector.counts["testsuites"] == 1)
        #expect(collector.counts["testsuite"] == 2)
        #expect(collector.counts["testcase"] == 2 * report.spec.rules.count)
        #expect(collector.counts["failure"] == 2)
        #expect(collector.failures == ["client-1/backoff.bound", "client-1/failed.retried"])
        #expect(collector.rootAttributes["tests"] == "\(2 * report.spec.rules.count)")
        #expect(collector.rootAttributes["failures"] == "2")
    }

    @Test func htmlIsSelfContainedWithALanePerClientAndLinkedFindings() throws {
        let report = try sampleReport()
        let html = HTMLReport.render(report)
        #expect(html.hasPrefix("<!DOCTYPE html>"))
        #expect(html.components(separatedBy: "<svg class=\"lane\"").count - 1 == report.clients.count)
        for client in report.clients { #expect(html.contains("id=\"lane-\(client.info.id)\"")) }
        // Findings are numbered per client; markers link to their entry.
        #expect(html.contains("id=\"f-lane-client-1-1\""))
        #expect(html.contains("id=\"f-lane-client-1-2\""))
        #expect(html.components(separatedBy: "\"><g class=\"mk finding\"").count - 1 == 2)
        #expect(html.contains("<a href=\"#f-lane-client-1-1\"><g class=\"mk finding\""))
        #expect(html.contains("<a href=\"#f-lane-client-1-2\"><g class=\"mk finding\""))
        #expect(html.contains("ua &lt;&amp;&gt;"))
        // Self-contained: an inline script and style, nothing loaded.
        #expect(!html.contains("<link") && !html.contains(" src=") && !html.contains("https:"))
        #expect(html.contains(">4009</text>"))  // the close code marker
        #expect(html.contains("fault close:4009"))
        // The summary's rule rows link each client to its first finding of that rule.
        #expect(html.contains("<tr data-rule=\"failed.retried\">"))
        #expect(html.contains("<a href=\"#f-lane-client-1-2\">client-1</a>"))
    }
}

/// Counts elements and remembers failing test cases.
final class XMLCollector: NSObject, XMLParserDelegate {
    var counts: [String: Int] = [:]
    var failures: [String] = []
    var rootAttributes: [String: String] = [:]
    private var currentCase = ""

    func parser(_ parser: XMLParser, didStartElement name: String, namespaceURI: String?, qualifiedName: String?,
                attributes: [String: String] = [:]) {
        counts[name, default: 0] += 1
        if name == "testsuites" { rootAttributes = attributes }
        if name == "testcase" { currentCase = "\(attributes["classname"] ?? "")/\(attributes["name"] ?? "")" }
        if name == "failure" { failures.append(currentCase) }
    }
}

@Suite struct LiveLineTests {
    @Test func findingsAndTransitionsGetOneLineEach() throws {
        let spec = try SpecLoader.load("bird")
        var analyzer = LiveAnalyzer(options: AnalyzerOptions(spec: spec))
        var lines: [String] = []
        for r in sampleRecords() { lines += analyzer.feed(r).compactMap(LiveLine.format) }
        #expect(lines.contains("14.200 s  client-1 conn 3  ERROR backoff.bound: delay 4.20 s > bound 1.00 s for attempt 1 (tolerance 0.25 s)"))
        #expect(lines.contains("0.003 s  client-1 conn 1  connecting -> connected  (handshake socket_id 1.1)"))
        #expect(lines.contains { $0.contains("(after injected fault close:4009)") })
    }
}

@Suite struct JUnitWarningTests {
    @Test func warningsFailOnlyUnderFailOnWarning() throws {
        let spec = try SpecLoader.load("bird")
        var builder = ReportBuilder()
        builder.add(.client(ClientInfo(id: "client-1", key: "k", firstSeen: 0)))
        builder.add(.finding(Finding(rule: "backoff.jitter", severity: .warning, party: .client, client: "client-1",
                                     conn: 1, t: 5, message: "all 8 delays are 0.50 of their bound: no jitter", evidence: [])))
        let report = builder.build(spec: spec, inputs: ["x"], grouping: "g", prefix: nil)
        #expect(report.exitStatus == 0)
        let lenient = try JUnitCases(JUnitReport.render(report))
        #expect(lenient.failures.isEmpty)
        #expect(lenient.output["client-1/backoff.jitter"]?.contains("all 8 delays are 0.50 of their bound") == true)

        let strictReport = builder.build(spec: spec, inputs: ["x"], grouping: "g", prefix: nil, failOn: .warning)
        #expect(strictReport.exitStatus == 1)
        let xml = JUnitReport.render(strictReport)
        #expect(try JUnitCases(xml).failures == ["client-1/backoff.jitter"])
        #expect(xml.contains(#"<failure type="warning" message="all 8 delays are 0.50 of their bound: no jitter">"#))
    }
}

@Suite struct HTMLNumberingTests {
    @Test func identicalFindingsAreGroupedWithACountAndEachMarkerLinksToTheGroup() throws {
        let spec = try SpecLoader.load("bird")
        var builder = ReportBuilder()
        builder.add(.client(ClientInfo(id: "client-1", key: "k", firstSeen: 0)))
        let f = Finding(rule: "trigger.unsubscribed", severity: .error, party: .client, client: "client-1",
                        conn: 1, t: 5, message: "m", evidence: [])
        var other = f
        other.message = "n"
        builder.add([.finding(f), .finding(f), .finding(other)])
        let html = HTMLReport.render(builder.build(spec: spec, inputs: ["x"], grouping: "g", prefix: nil))
        #expect(html.components(separatedBy: "<li class=\"finding\"").count - 1 == 2)
        #expect(html.contains("<span class=\"count\">×2</span>"))
        #expect(html.components(separatedBy: "href=\"#f-lane-client-1-1\"><g class=\"mk finding\"").count - 1 == 2)
        #expect(html.components(separatedBy: "href=\"#f-lane-client-1-2\"><g class=\"mk finding\"").count - 1 == 1)
    }
}
