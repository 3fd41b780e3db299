import Testing
import Foundation
import JSON
import TestSupport

/// The intercept from the page, in a real headless Chromium on a real session: a Python
/// `websockets` client sends `tick N` through `faultline proxy --ui` to an echo server; the
/// page pauses the connection's server messages, edits one held echo and sends it; the
/// client receives the edited text, and `faultline frames` on the capture shows the
/// original as received (dropped) and the edit as sent (injected), both marked
/// `intercept:edit` (the capture holds both payloads).
@Suite(.serialized) struct BrowserInterceptTests {
    @Test func aHeldServerMessageEditedInThePageReachesTheClientEdited() throws {
        #expect(Browser.available, "chromium is missing: run Tools/setup")
        guard Browser.available else { return }
        let dir = TestEnvironment.temporaryDirectory("ui-intercept")
        let capture = dir.appendingPathComponent("session.jsonl").path
        let server = try ChildProcess.python(TestEnvironment.path("Tests/Peers/ws_echo_server.py"))
        defer { server.stop() }
        let port = try #require(server.waitForLine { $0.hasPrefix("READY ") }).dropFirst("READY ".count)
        let proxy = try ChildProcess.faultline(["proxy", "--listen", "127.0.0.1:0", "--upstream", "ws://127.0.0.1:\(port)",
                                                "--record", capture, "--ui", "0"])
        defer { proxy.stop() }
        let proxyAddress = try #require(proxy.waitForLine { $0.hasPrefix("listening on ") }).dropFirst("listening on ".count)
        let ui = try #require(uiAddress(proxy.waitForLine { $0.hasPrefix("UI on ") }))
        let edited = "edited in the page"
        let client = try ChildProcess.python(TestEnvironment.path("Tests/Peers/ws_ticker.py"),
                                             ["ws://\(proxyAddress)/echo", "--until", edited, "--interval", "0.3"])
        defer { client.stop() }
        #expect(client.waitForLine { $0 == "CONNECTED" } != nil, "client: \(client.errorOutput.suffix(5))")

        let shots = Browser.screenshotDirectory(default: dir)
        let steps: [JSONValue] = [
            ["wait": "document.querySelector('#rows .row')", "timeout": 60],                            // 0
            ["click": "#rows .row"],
            ["wait": "document.querySelectorAll('#frames li').length >= 2", "timeout": 30],
            ["click": "#intercept-pause"],
            ["wait": "document.querySelector('#detail').dataset.paused === 'yes' && document.querySelector('#held li.held textarea')", "timeout": 30],
            ["eval": "document.querySelector('#held li.held textarea').value"],                         // 5
            ["type": "#held li.held textarea", "text": .string(edited)],
            ["viewport": 1400, "height": 900],
            ["screenshot": .string("\(shots)/ui-intercept-1400.png")],
            ["click": "#held li.held .held-edit"],
            ["wait": "document.querySelector('#action-result').textContent.indexOf('done: edit held #') === 0", "timeout": 30],   // 10
            ["wait": .string("Array.prototype.some.call(document.querySelectorAll('#frames li'), function (li) { return li.textContent.indexOf('injected · fault intercept:edit') >= 0 && li.textContent.indexOf('\(edited)') >= 0; })"), "timeout": 30],
            ["click": "#intercept-resume"],
            ["wait": "document.querySelector('#detail').dataset.paused === 'no' && !document.querySelector('#held li.held')", "timeout": 30],
        ]
        let run = try Browser.run(ui, steps: steps, in: dir, name: "intercept")
        #expect(run.failure == nil, "\(run.failure ?? "")")
        let heldText = try #require(run.value(5)?.stringValue)
        #expect(heldText.hasPrefix("tick "), "a held echo: \(heldText)")
        #expect(run.exceptions.isEmpty, "the page threw: \(run.exceptions)")
        #expect(!run.console.contains { $0.contains("Content Security Policy") }, "CSP violations: \(run.console)")

        // The client got the edit, not the echo it sent.
        #expect(client.waitForLine(timeout: 30) { $0 == "RECV \(edited)" } != nil, "client: \(client.output.suffix(5))")
        #expect(client.waitForLine(timeout: 30) { $0 == "DONE" } != nil)
        proxy.stop()

        // `frames` shows the original as received and the edit as sent.
        let frames = try ChildProcess.faultline(["frames", capture, "--format", "json"])
        #expect(frames.waitForExit(timeout: 60) == 0, "frames: \(frames.errorOutput)")
        let lines = frames.output.compactMap { try? JSONParser.parse($0) }
        let marked = lines.filter { $0["fault"]?.stringValue == "intercept:edit" }
        #expect(marked.map { $0["action"]?.stringValue } == ["dropped", "injected"], "\(marked)")
        #expect(marked.last?["len"]?.intValue == Int64(edited.utf8.count), "the edit, sent uncompressed")
        #expect(marked.allSatisfy { $0["from"]?.stringValue == "server" })
        let text = try ChildProcess.faultline(["frames", capture])
        #expect(text.waitForExit(timeout: 60) == 0)
        #expect(text.output.contains { $0.contains("[dropped] fault=intercept:edit") })
        #expect(text.output.contains { $0.contains("[injected] fault=intercept:edit") })
        // The capture keeps both payloads, and says what the operator did.
        let records = try String(contentsOfFile: capture, encoding: .utf8).split(separator: "\n").compactMap { try? JSONParser.parse(String($0)) }
        let payloads = records.filter { $0["type"]?.stringValue == "frame" && $0["fault"]?.stringValue == "intercept:edit" }
        #expect(payloads.map { $0["text"]?.stringValue } == [heldText, edited], "the original as received, the edit as sent")
        #expect(records.contains { $0["type"]?.stringValue == "fault" && $0["kind"]?.stringValue == "intercept"
            && $0["detail"]?.stringValue?.contains("the operator edited held message") == true })
    }
}
