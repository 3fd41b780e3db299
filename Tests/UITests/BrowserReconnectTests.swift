import Testing
import Foundation
import JSON
import TestSupport

/// The page reconnects by itself when its live socket drops, in a real headless Chromium
/// (and in Firefox, by FirefoxTests):
/// `faultline ui` is killed under the page and started again on the same port; the page
/// shows that it is reconnecting, reconnects, and resumes where it left off (the selected
/// connection's frames are neither lost nor shown twice). Every wait is on the page's own
/// state (`data-drops`, `data-connects`, `data-updates-since-connect`, the link badge),
/// read over DevTools.
@Suite(.serialized) struct BrowserReconnectTests {
    @Test func thePageReconnectsWhenTheUIRestartsOnItsPort() throws {
        #expect(Browser.available, "chromium is missing: run Tools/setup")
        guard Browser.available else { return }
        try Self.reconnect(in: .chromium)
    }

    static func reconnect(in engine: Browser.Engine) throws {
        let capture = TestEnvironment.path("Captures/backoff-bound.jsonl")
        let dir = TestEnvironment.temporaryDirectory("ui-reconnect")
        var ui = try ChildProcess.faultline(["ui", capture, "--listen", "127.0.0.1:0"])
        defer { ui.stop() }
        let address = try #require(uiAddress(ui.waitForLine { $0.hasPrefix("UI on ") }))
        let hostPort = address.dropFirst("http://".count).prefix { $0 != "/" }

        let frames = "document.querySelectorAll('#frames li').length"
        let driver = try Browser.start(address, steps: [
            ["wait": "document.body.dataset.connects === '1' && document.querySelector('#rows .row')", "timeout": 60],   // 0
            ["click": "#rows .row"],
            ["wait": .string("\(frames) > 0"), "timeout": 30],
            ["eval": .string(frames)],
            // The test kills the UI once it has read step 3's line.
            ["wait": "+document.body.dataset.drops >= 1 && document.querySelector('#link').textContent === 'reconnecting…'", "timeout": 60],
            ["wait": "+document.body.dataset.connects >= 2 && document.querySelector('#link').textContent === 'connected' && document.querySelector('#rows .row')", "timeout": 60],   // 5
            ["wait": .string("+document.body.dataset.updatesSinceConnect >= 1 && \(frames) > 0"), "timeout": 30],
            ["eval": .string(frames)],
            ["eval": "document.querySelector('#detail').hidden"],
        ], in: dir, name: "reconnect", engine: engine)
        defer { driver.stop() }
        let counted = driver.waitForLine(timeout: 180) { line in
            (try? JSONParser.parse(line))?["value"]?.intValue != nil
        }
        #expect(counted != nil, "the page never showed the connection's frames: \(driver.output) \(driver.errorOutput.suffix(5))")

        ui.stop()   // the page's socket drops with it
        ui = try ChildProcess.faultline(["ui", capture, "--listen", String(hostPort)])
        #expect(ui.waitForLine { $0.hasPrefix("UI on ") } != nil, "the UI did not start again on \(hostPort): \(ui.errorOutput)")

        let run = Browser.finish(driver, engine: engine)
        #expect(run.failure == nil, "\(run.failure ?? "")")
        let before = try #require(run.value(3)?.intValue)
        #expect(run.value(7)?.intValue == before, "after the reconnect the page holds the same frames, none twice")
        #expect(run.value(8)?.boolValue == false, "the selected connection is still shown")
        #expect(run.exceptions.isEmpty, "the page threw: \(run.exceptions)")
    }
}
