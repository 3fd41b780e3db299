import Testing
import Foundation
import Capture
import JSON
import TestSupport
import Vocabulary
import WebSocket

/// Every captured byte is rendered as text: a capture whose path, User-Agent, event names,
/// payloads and close reason are markup and script is opened with `faultline ui` in a real
/// headless Chromium; nothing of it runs or becomes an element, and all of it is shown,
/// literally, as text.
@Suite(.serialized) struct BrowserHostileTests {
    static let marks = [
        "/app/<img src=x onerror=window.__pwned=1>",
        "<script>window.__pwned=2</script>",
        "<img src=x onerror=window.__pwned=3>",
        "</pre><script>window.__pwned=4</script><svg onload=window.__pwned=5>",
        "<iframe src=javascript:window.__pwned=6>",
    ]

    static func writeCapture(_ path: String) throws {
        let writer = try CaptureWriter(path: path, header: CaptureHeader(tool: "test", startedAt: 1_764_455_426_000_000, source: "proxy"))
        try writer.append(.open(OpenRecord(conn: 1, t: 0, client: "127.0.0.1:40001", server: "127.0.0.1:9000")))
        try writer.append(.upgrade(UpgradeRecord(conn: 1, t: 10, from: .client, method: "GET", target: marks[0],
                                                 headers: [HeaderField("Host", "h"), HeaderField("User-Agent", marks[1])])))
        try writer.append(.upgrade(UpgradeRecord(conn: 1, t: 20, from: .server, status: 101, reason: "Switching Protocols", headers: [])))
        var event: [UInt8] = []
        JSONWriter.write(["event": .string(marks[2]), "data": .string(marks[3])], into: &event)
        try writer.append(.frame(FrameRecord(conn: 1, t: 100_000, from: .server, opcode: .text, masked: false, payload: event)))
        try writer.append(.frame(FrameRecord(conn: 1, t: 200_000, from: .client, opcode: .text, masked: true, payload: Array(marks[3].utf8))))
        try writer.append(.frame(FrameRecord(conn: 1, t: 300_000, from: .server, opcode: .binary, masked: false, payload: Array(marks[4].utf8))))
        let reason = Array(marks[4].utf8.prefix(120))
        try writer.append(.frame(FrameRecord(conn: 1, t: 400_000, from: .server, opcode: .close, masked: false, payload: [0x0F, 0xA0] + reason)))
        try writer.append(.end(EndRecord(conn: 1, t: 500_000, side: .server, kind: .fin)))
        try writer.close()
    }

    @Test func hostileCapturedBytesRenderInert() throws {
        #expect(Browser.available, "chromium is missing: run Tools/setup")
        guard Browser.available else { return }
        try Journeys.hostileBytesRenderInert(in: .chromium)
    }
}
