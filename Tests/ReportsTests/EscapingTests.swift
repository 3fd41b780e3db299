import Capture
import Foundation
import Lifecycle
import Testing
import TestSupport
import WebSocket
@testable import Reports

/// A peer's close reason, event name and User-Agent with ESC, BEL, CR and LF in them are
/// printed escaped by `frames`, `analyze`'s text report and the live lines (issue 15,
/// item 17); before, they reached the terminal raw.
@Suite struct EscapingTests {
    static let hostile = "x\u{1B}]0;owned\u{07}\r\nsummary: 0 clients"

    static func records() -> [CaptureRecord] {
        var records: [CaptureRecord] = [
            .open(OpenRecord(conn: 1, t: 0, client: "10.0.0.1:5000", server: "127.0.0.1:80")),
            .upgrade(UpgradeRecord(conn: 1, t: 1000, from: .client, method: "GET", target: "/app/k?protocol=7",
                                   headers: [HeaderField("User-Agent", hostile)])),
            .upgrade(UpgradeRecord(conn: 1, t: 2000, from: .server, status: 101, headers: [])),
        ]
        let event = #"{"event":"bird:\u001b[2Jping\r\nok","data":{}}"#
        records.append(.frame(FrameRecord(conn: 1, t: 3000, from: .client, opcode: .text, masked: true, payload: Array(event.utf8))))
        records.append(.frame(FrameRecord(conn: 1, t: 4000, from: .server, opcode: .close, masked: false,
                                          payload: [0x0F, 0xA0] + Array(hostile.utf8))))
        return records
    }

    static func writeCapture() throws -> String {
        let path = TestEnvironment.temporaryDirectory("escaping").appendingPathComponent("hostile.jsonl").path
        let writer = try CaptureWriter(path: path, header: CaptureHeader(tool: "test", startedAt: 0, source: "test"))
        for r in records() { try writer.append(r) }
        try writer.close()
        return path
    }

    static func hasRawControl(_ text: String) -> Bool {
        text.unicodeScalars.contains { $0.value < 0x20 && $0 != "\n" || $0.value == 0x7F }
    }

    @Test func framesTextEscapesCloseReasonsAndEventNames() throws {
        let result = try runFaultline(["frames", try Self.writeCapture()])
        #expect(result.status == 0)
        #expect(!Self.hasRawControl(result.stdout))
        #expect(result.stdout.contains(#"reason="x\x1b]0;owned\x07\r\nsummary: 0 clients""#))
        #expect(result.stdout.contains(#"bird:\x1b[2Jping\r\nok"#))
        #expect(result.stdout.split(separator: "\n").count == 2)
    }

    @Test func analyzeTextEscapesKeysCausesAndSummaries() throws {
        let result = try runFaultline(["analyze", try Self.writeCapture(), "--tolerance", "1000"])
        #expect(!Self.hasRawControl(result.stdout))
        #expect(result.stdout.contains(#"key 10.0.0.1 | x\x1b]0;owned\x07\r\nsummary: 0 clients | /app/k?protocol=7"#))
        // The forged line is not a line: only the report's own summaries (first and last) are.
        #expect(!result.stdout.contains("\nsummary: 0 clients"))
        #expect(result.stdout.components(separatedBy: "\nsummary: ").count == 3)
    }

    @Test func liveLinesAreEscaped() throws {
        let spec = try SpecLoader.load("bird")
        var analyzer = LiveAnalyzer(options: AnalyzerOptions(spec: spec))
        var lines: [String] = []
        for r in Self.records() { lines += analyzer.feed(r).compactMap(LiveLine.format) }
        lines += analyzer.finish(at: 10_000).compactMap(LiveLine.format)
        #expect(lines.contains { $0.contains(#"x\x1b]0;owned\x07\r\nsummary"#) })
        #expect(!lines.contains { Self.hasRawControl($0) || $0.contains("\n") })
    }
}
