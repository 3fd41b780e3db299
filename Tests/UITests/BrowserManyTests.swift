import Testing
import Foundation
import Capture
import TestSupport
import WebSocket

/// 10,000 connections in a real headless Chromium (and in Firefox, by FirefoxTests): the list is virtual (the page holds
/// only the rows on screen, whatever the count), scrolling to the end shows the last
/// connection, and a filter runs on the server.
@Suite(.serialized) struct BrowserManyTests {
    static let connections = 10_000

    static func writeCapture(_ path: String) throws {
        let writer = try CaptureWriter(path: path, header: CaptureHeader(tool: "test", startedAt: 1_764_455_426_000_000, source: "proxy"))
        for c in 1...connections {
            let t = Int64(c) * 1_000
            try writer.append(.open(OpenRecord(conn: c, t: t, client: "10.0.\(c / 250).\(c % 250):5000", server: "127.0.0.1:9000")))
            try writer.append(.upgrade(UpgradeRecord(conn: c, t: t, from: .client, method: "GET", target: "/app/key?n=\(c)",
                                                     headers: [HeaderField("Host", "h"),
                                                               HeaderField("User-Agent", c % 100 == 0 ? "okhttp/4.12" : "sim/1.0")])))
            try writer.append(.upgrade(UpgradeRecord(conn: c, t: t + 10, from: .server, status: 101, reason: "Switching Protocols", headers: [])))
        }
        try writer.close()
    }

    @Test func tenThousandConnectionsStayAVirtualList() throws {
        #expect(Browser.available, "chromium is missing: run Tools/setup")
        guard Browser.available else { return }
        try Self.virtualList(in: .chromium)
    }

    static func virtualList(in engine: Browser.Engine) throws {
        let (dir, ui, served) = try serveCapture("ui-many", write: Self.writeCapture)
        defer { ui.stop() }
        let address = try #require(served)
        let run = try Browser.run(address, steps: [
            ["wait": "document.querySelector('#counts').textContent.indexOf('10000 connections') === 0", "timeout": 60],
            ["eval": "document.querySelectorAll('#rows .row').length"],                                     // 1
            ["eval": "(document.querySelector('#rows').scrollTop = document.querySelector('#rows').scrollHeight, true)"],   // an expression: the Firefox driver wraps it
            ["wait": "document.querySelector('#rows .row[data-conn=\"10000\"]')", "timeout": 60],
            ["eval": "document.querySelectorAll('#rows .row').length"],                                     // 4
            ["type": "#filter", "text": "ua:okhttp"],
            ["wait": "document.querySelector('#counts').textContent.indexOf('100 connections') === 0", "timeout": 60],
            ["eval": "Array.from(document.querySelectorAll('#rows .row .c-ua')).every(function (e) { return e.textContent === 'okhttp/4.12'; })"],
        ], in: dir, name: "many", engine: engine)
        #expect(run.failure == nil, "\(run.failure ?? "")")
        for step in [1, 4] {
            let rows = run.value(step)?.intValue ?? -1
            #expect(rows > 0 && rows <= 200, "the page holds \(rows) rows of 10,000")
        }
        #expect(run.value(7)?.boolValue == true)
        #expect(run.exceptions.isEmpty, "the page threw: \(run.exceptions)")
    }
}
