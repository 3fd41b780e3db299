import Testing
import Foundation
import Capture
import JSON
import TestSupport

/// The proxy's UI in a real headless Chromium, on a real session: a simulated client
/// connects through `faultline proxy --ui`, shows up on the page, and a click on
/// "close 4009" makes it fail, which the page shows, the client prints and the capture
/// records. Screenshots at 1400 and 760 px.
@Suite(.serialized) struct BrowserLiveTests {
    @Test func aClientAppearsAndClosing4009FromThePageFailsIt() throws {
        #expect(Browser.available, "chromium is missing: run Tools/setup")
        guard Browser.available else { return }
        let dir = TestEnvironment.temporaryDirectory("ui-live")
        let capture = dir.appendingPathComponent("session.jsonl").path
        let server = try ChildProcess.faultline(["sim", "server", "--listen", "127.0.0.1:0", "--event-interval", "500ms"])
        defer { server.stop() }
        let serverAddress = try #require(server.waitForLine { $0.hasPrefix("listening on ") }).dropFirst("listening on ".count)
        let proxy = try ChildProcess.faultline(["proxy", "--listen", "127.0.0.1:0", "--upstream", "ws://\(serverAddress)",
                                                "--record", capture, "--ui", "0"])
        defer { proxy.stop() }
        let proxyAddress = try #require(proxy.waitForLine { $0.hasPrefix("listening on ") }).dropFirst("listening on ".count)
        let ui = try #require(uiAddress(proxy.waitForLine { $0.hasPrefix("UI on ") }))
        let client = try ChildProcess.faultline(["sim", "client", "--url", "ws://\(proxyAddress)/app/sim-key", "--clients", "1",
                                                 "--duration", "120s"])
        defer { client.stop() }

        let shots = Browser.screenshotDirectory(default: dir)
        let steps: [JSONValue] = [
            ["wait": "document.querySelector('#rows .row[data-state=\"connected\"]')", "timeout": 60],   // 0
            ["click": "#rows .row"],
            ["wait": "document.querySelector('#detail').dataset.state === 'connected' && document.querySelectorAll('#frames li').length >= 4", "timeout": 30],
            ["wait": "document.querySelector('#lane').complete && document.querySelector('#lane').naturalWidth > 0", "timeout": 30],
            ["viewport": 1400, "height": 900],
            ["screenshot": .string("\(shots)/ui-live-1400.png")],                                    // 5
            ["eval": "document.querySelector('#close-button').textContent"],
            ["click": "#close-button"],
            ["wait": "document.querySelector('#detail').dataset.state === 'failed'", "timeout": 30],
            ["wait": "document.querySelector('#rows .row[data-state=\"failed\"]')", "timeout": 30],
            ["eval": "document.querySelector('#action-result').textContent"],                        // 10
            ["eval": "document.querySelector('#d-meta').textContent"],
            ["wait": "document.querySelector('#lane').complete && document.querySelector('#lane').naturalWidth > 0", "timeout": 30],
            ["screenshot": .string("\(shots)/ui-failed-1400.png")],
            ["viewport": 760, "height": 1100],
            ["screenshot": .string("\(shots)/ui-failed-760.png")],                                  // 15
        ]
        let run = try Browser.run(ui, steps: steps, in: dir, name: "live")
        #expect(run.failure == nil, "\(run.failure ?? "")")
        #expect(run.value(6)?.stringValue == "close 4009")
        #expect(run.value(10)?.stringValue == "done: close:4009 on connection 1")
        #expect(run.value(11)?.stringValue?.contains("ended (close 4009 from server)") == true)
        #expect(run.exceptions.isEmpty, "the page threw: \(run.exceptions)")
        #expect(!run.console.contains { $0.contains("Content Security Policy") }, "CSP violations: \(run.console)")

        // The client itself went to failed on the 4009 (a code that forbids reconnecting).
        let failed = client.waitForLine(timeout: 30) { $0.contains("-> failed") }
        #expect(failed?.contains("closed 4009") == true, "client: \(client.output.suffix(5))")
        // The capture records the fault and the close it sent (every complete line is
        // readable while the proxy runs).
        proxy.stop()
        let lines = try String(contentsOfFile: capture, encoding: .utf8).split(separator: "\n")
        let records = lines.compactMap { try? JSONParser.parse(String($0)) }
        #expect(records.contains { $0["type"]?.stringValue == "fault" && $0["rule"]?.stringValue == "close:4009" && $0["conn"]?.intValue == 1 })
        #expect(records.contains { $0["type"]?.stringValue == "close" && $0["code"]?.intValue == 4009 && $0["action"]?.stringValue == "injected" })
        print("UI screenshots: \(shots)/ui-live-1400.png, ui-failed-1400.png, ui-failed-760.png")
    }

    /// A page of another origin (localhost instead of 127.0.0.1: another origin to the
    /// browser) cannot open the UI's socket, and the UI's own page can. On the way, a
    /// recorded capture's finding is shown with its rule's explanation (a screenshot).
    @Test func anotherOriginCannotOpenTheLiveSocket() throws {
        #expect(Browser.available, "chromium is missing: run Tools/setup")
        guard Browser.available else { return }
        let dir = TestEnvironment.temporaryDirectory("ui-origin")
        let ui = try ChildProcess.faultline(["ui", TestEnvironment.path("Captures/backoff-bound.jsonl"), "--listen", "127.0.0.1:0"])
        defer { ui.stop() }
        let address = try #require(uiAddress(ui.waitForLine { $0.hasPrefix("UI on ") }))
        let port = String(address.split(separator: ":").last ?? "").filter(\.isNumber)
        let attempt = { (url: String) -> JSONValue in
            .string("new Promise(function (resolve) { var s = new WebSocket('\(url)'); s.onopen = function () { s.close(); resolve('open'); }; s.onerror = function () { resolve('refused'); }; })")
        }
        let run = try Browser.run(address, steps: [
            ["wait": "document.querySelector('#link').textContent === 'connected'", "timeout": 30],
            ["eval": attempt("ws://127.0.0.1:\(port)/live")],
            ["eval": attempt("ws://localhost:\(port)/live")],
            ["click": "#rows .row"],
            ["wait": "document.querySelector('#findings li.finding .explain')", "timeout": 30],
            ["wait": "document.querySelector('#lane').complete && document.querySelector('#lane').naturalWidth > 0", "timeout": 30],
            ["viewport": 1400, "height": 900],
            ["screenshot": .string("\(Browser.screenshotDirectory(default: dir))/ui-offline-1400.png")],
            ["eval": "document.querySelector('#findings li.finding').dataset.rule"],
        ], in: dir, name: "origin")
        #expect(run.failure == nil, "\(run.failure ?? "")")
        #expect(run.value(1)?.stringValue == "open")
        #expect(run.value(2)?.stringValue == "refused")
        #expect(run.value(8)?.stringValue == "backoff.bound")
    }
}
