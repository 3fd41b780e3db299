import ProxyCore
import ProxyShell
import Testing
import Vocabulary

/// The large-frame budget is the proxy's, not each connection's: every connection's relay
/// settings hand out the one instance. Each call of `relayConfig` once made a budget of its
/// own, so with 100 clients each sending a 60 MB frame under `drop-message` every frame was
/// gathered whole and the proxy reached 5 GB (`Tools/bench/hostile large --fault ...`).
@Suite struct LargeFrameBudgetSharingTests {
    @Test func everyConnectionSharesTheProxysBudget() {
        let settings = ProxySettings(listen: HostPort(host: "127.0.0.1", port: 0),
                                     upstream: UpstreamURL(host: "127.0.0.1", port: 9))
        let first = settings.relayConfig.largeFrameBudget
        let second = settings.relayConfig.largeFrameBudget
        #expect(first === second)
        #expect(first === settings.largeFrameBudget)
        // A copy of the settings (the server keeps one) shares it too.
        let copy = settings
        #expect(copy.relayConfig.largeFrameBudget === first)
    }
}
