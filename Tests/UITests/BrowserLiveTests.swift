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
        try Journeys.closeFromThePage(in: .chromium)
    }

    /// A page of another origin (localhost instead of 127.0.0.1: another origin to the
    /// browser) cannot open the UI's socket, and the UI's own page can. On the way, a
    /// recorded capture's finding is shown with its rule's explanation (a screenshot).
    @Test func anotherOriginCannotOpenTheLiveSocket() throws {
        #expect(Browser.available, "chromium is missing: run Tools/setup")
        guard Browser.available else { return }
        try Journeys.anotherOriginIsRefused(in: .chromium)
    }

    /// The driver's click proves itself (see `Journeys.aClickThatCannotLandFailsItsStep`).
    @Test func aClickThatCannotLandFailsItsStep() throws {
        #expect(Browser.available, "chromium is missing: run Tools/setup")
        guard Browser.available else { return }
        try Journeys.aClickThatCannotLandFailsItsStep(in: .chromium)
    }
}
