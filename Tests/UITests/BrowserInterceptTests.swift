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
        try Journeys.editHeldMessage(in: .chromium)
    }
}
