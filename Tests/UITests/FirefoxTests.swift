import Testing
import Foundation
import JSON
import TestSupport

/// The UI's journeys in a real headless Firefox (Debian's firefox-esr, installed by
/// Tools/setup), one browser for the whole suite, driven over WebDriver BiDi: the same
/// steps and checks as in Chromium (`Journeys`, and the reconnect, 10,000-row and merge
/// suites' own). Without firefox-esr the suite is skipped,
/// and says why.
@Suite(.serialized, .firefox, .enabled(if: FirefoxBrowser.available, "firefox-esr is missing: run Tools/setup"))
struct FirefoxTests {
    @Test func aClientAppearsAndClosing4009FromThePageFailsIt() throws {
        try Journeys.closeFromThePage(in: .suiteFirefox())
    }

    @Test func aHeldServerMessageEditedInThePageReachesTheClientEdited() throws {
        try Journeys.editHeldMessage(in: .suiteFirefox())
    }

    @Test func aClickThatCannotLandFailsItsStep() throws {
        try Journeys.aClickThatCannotLandFailsItsStep(in: .suiteFirefox())
    }

    @Test func hostileCapturedBytesRenderInert() throws {
        try Journeys.hostileBytesRenderInert(in: .suiteFirefox())
    }

    @Test func anotherOriginCannotOpenTheLiveSocket() throws {
        try Journeys.anotherOriginIsRefused(in: .suiteFirefox())
    }

    @Test func thePageReconnectsWhenTheUIRestartsOnItsPort() throws {
        try BrowserReconnectTests.reconnect(in: .suiteFirefox())
    }

    @Test func tenThousandConnectionsStayAVirtualList() throws {
        try BrowserManyTests.virtualList(in: .suiteFirefox())
    }

    @Test func aFleetsReplicasAreOneSessionOnThePage() throws {
        try BrowserMergeTests.replicasMerged(in: .suiteFirefox())
    }

    /// Firefox enforces the page's Content-Security-Policy, and the driver hears of a
    /// violation: a script element the page did not ship does not run, and the violation
    /// reaches the run's console (so the journeys' "no CSP violation" checks can fail).
    @Test func anInlineScriptIsRefusedAndReported() throws {
        let dir = TestEnvironment.temporaryDirectory("ui-firefox-csp")
        let ui = try ChildProcess.faultline(["ui", TestEnvironment.path("Captures/backoff-bound.jsonl"), "--listen", "127.0.0.1:0"])
        defer { ui.stop() }
        let address = try #require(uiAddress(ui.waitForLine { $0.hasPrefix("UI on ") }))
        let inline = "(function () { var s = document.createElement('script'); s.textContent = 'window.__inline = 1'; document.body.appendChild(s); return typeof window.__inline; })()"
        let run = try Browser.run(address, steps: [
            ["wait": "document.querySelector('#link').textContent === 'connected'", "timeout": 30],
            ["eval": .string(inline)],
            ["eval": "navigator.userAgent"],
        ], in: dir, name: "csp", engine: .suiteFirefox())
        #expect(run.failure == nil, "\(run.failure ?? "")")
        #expect(run.value(1)?.stringValue == "undefined", "an inline script ran")
        #expect(run.console.contains { $0.contains("Content Security Policy violation: script-src") }, "console: \(run.console)")
        #expect(run.value(2)?.stringValue?.contains("Firefox/") == true, "not Firefox: \(String(describing: run.value(2)))")
    }
}
