import Testing
import Foundation
import Capture
import JSON
import TestSupport

/// The UI's main journeys, each written once and run in both browsers: in Chromium by
/// BrowserLiveTests, BrowserInterceptTests and BrowserHostileTests, in Firefox by
/// FirefoxTests. Every step and every check is the same in both.
enum Journeys {
    /// A simulated client connects through `faultline proxy --ui`, shows up on the page,
    /// and a click on "close 4009" makes it fail, which the page shows, the client prints
    /// and the capture records. Screenshots at 1400 and 760 px.
    static func closeFromThePage(in engine: Browser.Engine) throws {
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

            let shots = engine.screenshotDirectory(default: dir), prefix = engine.screenshotPrefix
            let steps: [JSONValue] = [
                ["wait": "document.querySelector('#rows .row[data-state=\"connected\"]')", "timeout": 60],   // 0
                ["click": "#rows .row"],
                ["wait": "document.querySelector('#detail').dataset.state === 'connected' && document.querySelectorAll('#frames li').length >= 4", "timeout": 30],
                ["wait": "document.querySelector('#lane').complete && document.querySelector('#lane').naturalWidth > 0", "timeout": 30],
                ["viewport": 1400, "height": 900],
                ["screenshot": .string("\(shots)/\(prefix)live-1400.png")],                                    // 5
                ["eval": "document.querySelector('#close-button').textContent"],
                ["click": "#close-button"],
                ["wait": "document.querySelector('#detail').dataset.state === 'failed'", "timeout": 30],
                ["wait": "document.querySelector('#rows .row[data-state=\"failed\"]')", "timeout": 30],
                ["eval": "document.querySelector('#action-result').textContent"],                        // 10
                ["eval": "document.querySelector('#d-meta').textContent"],
                ["wait": "document.querySelector('#lane').complete && document.querySelector('#lane').naturalWidth > 0", "timeout": 30],
                ["screenshot": .string("\(shots)/\(prefix)failed-1400.png")],
                ["viewport": 760, "height": 1100],
                ["screenshot": .string("\(shots)/\(prefix)failed-760.png")],                                  // 15
            ]
            let run = try Browser.run(ui, steps: steps, in: dir, name: "live", engine: engine)
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
            print("UI screenshots: \(shots)/\(prefix)live-1400.png, \(prefix)failed-1400.png, \(prefix)failed-760.png")
    }

    /// A Python `websockets` client sends `tick N` through `faultline proxy --ui` to an echo
    /// server; the page pauses the connection's server messages, edits one held echo and
    /// sends it, then resumes; the client receives the edited text, and `faultline frames`
    /// on the capture shows the original as received (dropped) and the edit as sent
    /// (injected), both marked `intercept:edit` (the capture holds both payloads).
    static func editHeldMessage(in engine: Browser.Engine) throws {
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

            let shots = engine.screenshotDirectory(default: dir), prefix = engine.screenshotPrefix
            // Where the action buttons are: the live text above them (the connection's facts,
            // the intercept's state) must never move them, or a click on its way lands beside.
            let buttons = "['#close-button', '#fault-apply', '#send-button', '#intercept-pause', '#intercept-resume'].map(function (s) { return Math.round(document.querySelector(s).getBoundingClientRect().top + window.scrollY); }).join(',')"
            let steps: [JSONValue] = [
                ["wait": "document.querySelector('#rows .row')", "timeout": 60],                            // 0
                ["click": "#rows .row"],
                ["wait": "document.querySelectorAll('#frames li').length >= 2", "timeout": 30],
                ["click": "#intercept-pause"],
                ["wait": "document.querySelector('#detail').dataset.paused === 'yes' && document.querySelector('#held li.held textarea')", "timeout": 30],
                ["viewport": 1400, "height": 900],                                                          // 5
                ["eval": .string(buttons)],
                ["eval": "document.querySelector('#held li.held textarea').value"],
                ["type": "#held li.held textarea", "text": .string(edited)],
                ["screenshot": .string("\(shots)/\(prefix)intercept-1400.png")],
                ["click": "#held li.held .held-edit"],                                                      // 10
                ["wait": "document.querySelector('#action-result').textContent.indexOf('done: edit held #') === 0", "timeout": 30],
                ["wait": .string("Array.prototype.some.call(document.querySelectorAll('#frames li'), function (li) { return li.textContent.indexOf('injected · fault intercept:edit') >= 0 && li.textContent.indexOf('\(edited)') >= 0; })"), "timeout": 30],
                ["click": "#intercept-resume"],
                ["wait": "document.querySelector('#detail').dataset.paused === 'no' && !document.querySelector('#held li.held')", "timeout": 30],
                // The client closes once it has the edit: the page's facts grow ("ended (...)").
                ["wait": "document.querySelector('#d-meta').textContent.indexOf('ended') >= 0", "timeout": 30],  // 15
                ["eval": .string(buttons)],
            ]
            let run = try Browser.run(ui, steps: steps, in: dir, name: "intercept", engine: engine)
            #expect(run.failure == nil, "\(run.failure ?? "")")
            let heldText = try #require(run.value(7)?.stringValue)
            #expect(run.value(6) != nil && run.value(16) == run.value(6), "the buttons moved as the connection ended: \(String(describing: run.value(6))) then \(String(describing: run.value(16)))")
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

    /// A capture whose path, User-Agent, event names, payloads and close reason are markup
    /// and script, opened with `faultline ui`: nothing of it runs or becomes an element, and
    /// all of it is shown, literally, as text.
    static func hostileBytesRenderInert(in engine: Browser.Engine) throws {
            let (dir, ui, served) = try serveCapture("ui-hostile", write: BrowserHostileTests.writeCapture)
            defer { ui.stop() }
            let address = try #require(served)
            let text = "document.body.textContent"
            let run = try Browser.run(address, steps: [
                ["wait": "document.querySelector('#rows .row')", "timeout": 30],
                ["click": "#rows .row"],
                ["wait": "document.querySelectorAll('#frames li').length === 4", "timeout": 30],
                ["wait": "document.querySelector('#lane').complete", "timeout": 30],
                ["eval": "typeof window.__pwned"],                                                   // 4
                ["eval": "document.querySelectorAll('script').length"],
                ["eval": "Array.from(document.images).map(function (i) { return i.id; }).join(',')"],
                ["eval": "document.querySelectorAll('iframe, svg, pre script, [onerror], [onload]').length"],
                ["eval": .string(text)],                                                             // 8
                ["eval": "document.querySelector('#rows .row .c-ua').textContent"],
                ["eval": "document.querySelector('#frames').textContent"],
            ], in: dir, name: "hostile", engine: engine)
            #expect(run.failure == nil, "\(run.failure ?? "")")
            #expect(run.value(4)?.stringValue == "undefined", "a captured script ran")
            #expect(run.value(5)?.intValue == 1, "only the page's own script element")
            #expect(run.value(6)?.stringValue == "lane", "only the lane image")
            #expect(run.value(7)?.intValue == 0, "captured markup became elements")
            let page = run.value(8)?.stringValue ?? ""
            for mark in BrowserHostileTests.marks.prefix(4) { #expect(page.contains(mark), "not shown as text: \(mark)") }
            #expect(run.value(9)?.stringValue == BrowserHostileTests.marks[1])
            let frames = run.value(10)?.stringValue ?? ""
            #expect(frames.contains("close 4000 '<iframe src=javascript:window.__pwned=6>'"), "the close reason as text: \(frames)")
            // The binary frame is shown as hex, its bytes as dots and letters.
            #expect(frames.contains("3c 69 66 72 61 6d 65"))
            #expect(run.exceptions.isEmpty, "the page threw: \(run.exceptions)")
    }

    /// A page of another origin (localhost instead of 127.0.0.1: another origin to the
    /// browser) cannot open the UI's socket, and the UI's own page can. On the way, a
    /// recorded capture's finding is shown with its rule's explanation (a screenshot).
    static func anotherOriginIsRefused(in engine: Browser.Engine) throws {
            let dir = TestEnvironment.temporaryDirectory("ui-origin")
            let ui = try ChildProcess.faultline(["ui", TestEnvironment.path("Captures/backoff-bound.jsonl"), "--listen", "127.0.0.1:0"])
            defer { ui.stop() }
            let address = try #require(uiAddress(ui.waitForLine { $0.hasPrefix("UI on ") }))
            let port = String(address.split(separator: ":").last ?? "").filter(\.isNumber)
            let attempt = { (url: String) -> JSONValue in
                // Firefox refuses a socket its page's connect-src forbids at once, by throwing.
                .string("new Promise(function (resolve) { var s; try { s = new WebSocket('\(url)'); } catch (e) { return resolve('refused'); } s.onopen = function () { s.close(); resolve('open'); }; s.onerror = function () { resolve('refused'); }; })")
            }
            let run = try Browser.run(address, steps: [
                ["wait": "document.querySelector('#link').textContent === 'connected' && document.querySelector('#rows .row')", "timeout": 30],
                ["eval": attempt("ws://127.0.0.1:\(port)/live")],
                ["eval": attempt("ws://localhost:\(port)/live")],
                ["click": "#rows .row"],
                ["wait": "document.querySelector('#findings li.finding .explain')", "timeout": 30],
                ["wait": "document.querySelector('#lane').complete && document.querySelector('#lane').naturalWidth > 0", "timeout": 30],
                ["viewport": 1400, "height": 900],
                ["screenshot": .string("\(engine.screenshotDirectory(default: dir))/\(engine.screenshotPrefix)offline-1400.png")],
                ["eval": "document.querySelector('#findings li.finding').dataset.rule"],
            ], in: dir, name: "origin", engine: engine)
            #expect(run.failure == nil, "\(run.failure ?? "")")
            #expect(run.value(1)?.stringValue == "open")
            #expect(run.value(2)?.stringValue == "refused")
            #expect(run.value(8)?.stringValue == "backoff.bound")
    }

    /// The drivers' click proves itself: on an element that something covers, the step
    /// fails saying what covers it; on one that never receives the click (the page
    /// swallows it before it gets there), the step fails saying so, instead of passing and
    /// leaving a later wait to time out.
    static func aClickThatCannotLandFailsItsStep(in engine: Browser.Engine) throws {
        let (dir, ui, served) = try serveCapture("ui-click", write: { try FileManager.default.copyItem(atPath: TestEnvironment.path("Captures/backoff-bound.jsonl"), toPath: $0) })
        defer { ui.stop() }
        let address = try #require(served)
        // The error of the click on the first row, after `setup` ran in the page.
        let clickError = { (name: String, setup: String) throws -> String in
            let run = try Browser.run(address, steps: [
                ["wait": "document.querySelector('#link').textContent === 'connected' && document.querySelector('#rows .row')", "timeout": 30],
                ["eval": .string("(function () { \(setup); return true; })()")],
                ["click": "#rows .row", "timeout": 1],
            ], in: dir, name: name, engine: engine)
            #expect(run.value(1)?.boolValue == true, "\(run.steps)")
            return run.steps.last?["error"]?.stringValue ?? "no error: \(run.steps)"
        }
        let covered = try clickError("covered", "var d = document.createElement('div'); d.id = 'cover'; d.style.position = 'fixed'; d.style.top = d.style.left = '0'; d.style.width = d.style.height = '100%'; d.style.zIndex = '9'; document.body.appendChild(d)")
        #expect(covered.contains("not clickable: #rows .row is covered at its centre by div#cover"), "\(covered)")
        let swallowed = try clickError("swallowed", "window.addEventListener('click', function (e) { e.stopPropagation(); }, true)")
        #expect(swallowed.contains("the click did not reach #rows .row (at its centre now: "), "\(swallowed)")
    }
}
