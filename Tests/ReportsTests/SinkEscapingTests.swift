import Capture
import Foundation
import FoundationXML
import JSON
import Lifecycle
import Testing
import TestSupport
import Vocabulary
import WebSocket
@testable import Reports

/// Every field `frames` prints, in text and JSON alike, holds no character a terminal acts
/// on or reorders (C1 controls such as CSI U+009B, bidi overrides and isolates, U+2028/2029,
/// DEL), and JUnit stays well-formed XML whatever a capture holds (U+FFFE, U+FFFF, C0).
@Suite struct SinkEscapingTests {
    static let hostile = "a\u{9B}2J\u{202E}b\u{2066}c\u{2028}d\u{7F}e\u{FFFE}f\u{FFFF}g\u{85}h\u{1B}[2Ji"
    /// What may stand raw in a JSON string of a payload (no C0): the event name's bytes are
    /// copied from the payload when nothing in it needs escaping.
    static let rawInJSON = "a\u{9B}2J\u{202E}b\u{2066}c\u{2028}d\u{7F}e\u{85}f"

    static func writeCapture() throws -> String {
        let h = hostile
        let event = "{\"event\":\"bird:\(rawInJSON)\",\"data\":{}}"
        let records: [CaptureRecord] = [
            .open(OpenRecord(conn: 1, t: 0, client: "10.0.0.1:5000", server: "127.0.0.1:80", upstream: h)),
            .upgrade(UpgradeRecord(conn: 1, t: 1000, from: .client, method: "GET", target: "/app/k?x=\(h)",
                                   headers: [HeaderField("User-Agent", h)])),
            .upgrade(UpgradeRecord(conn: 1, t: 2000, from: .server, status: 101, reason: h, headers: [])),
            .frame(FrameRecord(conn: 1, t: 3000, from: .client, opcode: .text, masked: true, payload: Array(event.utf8))),
            .fault(FaultRecord(conn: 1, t: 3500, rule: "close:4009,reason=\(h)", kind: "close", target: .client, detail: h)),
            .note(NoteRecord(conn: 1, t: 3600, level: .warning, message: h)),
            .frame(FrameRecord(conn: 1, t: 4000, from: .server, opcode: .close, masked: false,
                               payload: [0x0F, 0xA0] + Array(h.utf8))),
            .end(EndRecord(conn: 1, t: 5000, side: .client, kind: .fin, detail: h)),
            .tunnel(TunnelRecord(conn: 2, t: 6000, event: .open, client: h, target: h, detail: h)),
            .http(HTTPRecord(conn: 3, t: 7000, tEnd: 8000, client: h, method: "GET", url: "http://x/\(h)",
                             requestHeaders: [], status: 200, reason: h, error: h)),
        ]
        let path = TestEnvironment.temporaryDirectory("sink-escaping").appendingPathComponent("hostile.jsonl").path
        let writer = try CaptureWriter(path: path, header: CaptureHeader(tool: "test", startedAt: 0, source: "test"))
        for r in records { try writer.append(r) }
        try writer.close()
        return path
    }

    /// A character no human-readable output may hold raw (LF ends lines and is allowed).
    static func rawUnsafe(_ text: String) -> [String] {
        text.unicodeScalars.filter { $0 != "\n" && DisplayUnsafe.contains($0) }
            .map { "U+" + String($0.value, radix: 16, uppercase: true) }
    }

    @Test(arguments: ["text", "json"])
    func framesPrintsNoUnsafeCharacterInAnyField(format: String) throws {
        let result = try runFaultline(["frames", try Self.writeCapture(), "--format", format, "--all", "--payload",
                                       "--max-payload-chars", "1000"])
        #expect(result.status == 0, "\(result.stderr)")
        #expect(Self.rawUnsafe(result.stdout) == [])
        #expect(Self.rawUnsafe(result.stderr) == [])
        // Every record printed (the hostile text cannot forge or swallow lines).
        #expect(result.stdout.split(separator: "\n").count >= 10)
    }

    @Test func framesJSONStillCarriesTheExactText() throws {
        let result = try runFaultline(["frames", try Self.writeCapture(), "--format", "json", "--all"])
        let lines = try result.stdout.split(separator: "\n").map { try JSONParser.parse(Array($0.utf8)) }
        let notes = lines.filter { $0["record"]?.stringValue == "note" }
        #expect(notes.first?["message"]?.stringValue == Self.hostile)
        let close = lines.first { $0["close_code"] != nil }
        #expect(close?["close_reason"]?.stringValue == Self.hostile)
        let event = lines.first { $0["record"] == nil && $0["event"] != nil }
        #expect(event?["event"]?.stringValue == "bird:" + Self.rawInJSON)
    }

    @Test func jsonStringsEscapeEveryDisplayUnsafeCharacter() {
        var out: [UInt8] = []
        JSONWriter.writeString("\u{9B}\u{202E}\u{2069}\u{2028}\u{2029}\u{7F}\u{61C}\u{200F}é€\u{1F600}", into: &out)
        #expect(String(decoding: out, as: UTF8.self)
                == #""\u009b\u202e\u2069\u2028\u2029\u007f\u061c\u200fé€"# + "\u{1F600}\"")
    }

    @Test func junitIsWellFormedWhateverTheCaptureHolds() throws {
        let result = try runFaultline(["analyze", try Self.writeCapture(), "--format", "junit"])
        #expect(result.status != 2, "\(result.stderr)")
        let forbidden = result.stdout.unicodeScalars.filter {
            ($0.value < 0x20 && $0 != "\n" && $0 != "\r" && $0 != "\t") || $0.value == 0xFFFE || $0.value == 0xFFFF
        }
        #expect(forbidden.isEmpty)
        let parser = XMLParser(data: Data(result.stdout.utf8))
        #expect(parser.parse(), "JUnit XML does not parse: \(parser.parserError.map(String.init(describing:)) ?? "")")
    }

    @Test func xmlEscapingDropsWhatXMLForbids() {
        #expect(escapeXML("a\u{FFFE}b\u{FFFF}c\u{1}d\te\u{85}<") == #"a?b?c\x01d"# + "\t" + #"e\u{0085}&lt;"#)
        // Bidi overrides and C1 controls are shown, not acted on, in HTML and JUnit alike.
        #expect(escapeXML("user\u{202E}gpj.exe\u{9B}2J") == #"user\u{202e}gpj.exe\u{009b}2J"#)
    }
}
