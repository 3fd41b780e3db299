import Testing
import TestSupport

/// The command line of the UI: help with examples, and unusable flags refused with exit 2
/// and a message naming the flag, before anything listens.
@Suite struct UICommandLineTests {
    @Test func helpHasExamplesAndEveryOptionItsDefault() throws {
        let ui = try runFaultline(["help", "ui"])
        #expect(ui.status == 0)
        #expect(ui.stdout.contains("EXAMPLES:\n  faultline ui session.jsonl"))
        #expect(ui.stdout.contains("(default: 127.0.0.1:8090)"))
        let proxy = try runFaultline(["help", "proxy"]).stdout
        #expect(proxy.contains("--ui <[host:]port>"))
        #expect(proxy.contains("--ui-token-file <file>"))
    }

    @Test func unusableFlagsAreRefusedBeforeAnythingListens() throws {
        let remote = try runFaultline(["proxy", "--listen", "127.0.0.1:0", "--upstream", "ws://127.0.0.1:9", "--ui", "0.0.0.0:0"])
        #expect(remote.status == 2)
        #expect(remote.stderr.contains("--ui 0.0.0.0:0: not a loopback address") && remote.stderr.contains("needs a token"), "\(remote.stderr)")
        let bad = try runFaultline(["proxy", "--listen", "127.0.0.1:0", "--upstream", "ws://127.0.0.1:9", "--ui", "nowhere"])
        #expect(bad.status == 2)
        #expect(bad.stderr.contains("--ui 'nowhere' is not [HOST:]PORT"), "\(bad.stderr)")
        let stray = try runFaultline(["proxy", "--listen", "127.0.0.1:0", "--upstream", "ws://127.0.0.1:9", "--ui-token", "t"])
        #expect(stray.status == 2)
        #expect(stray.stderr.contains("--ui-token needs --ui"), "\(stray.stderr)")
        let none = try runFaultline(["ui"])
        #expect(none.status == 2)
        let missing = try runFaultline(["ui", "/nonexistent/capture.jsonl", "--listen", "127.0.0.1:0"])
        #expect(missing.status == 2)
        #expect(missing.stderr.contains("/nonexistent/capture.jsonl"), "\(missing.stderr)")
    }
}
