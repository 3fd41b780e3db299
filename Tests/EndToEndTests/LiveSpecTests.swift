import Foundation
import Glibc
import Testing
import TestSupport

/// `faultline proxy --live --spec ...`: the analyzer running inside the proxy prints a sim
/// client's deliberate bug as a finding while the session runs, and a summary at shutdown.
/// The bug is `no-ping` on a connection where nothing flows (no server events, activity
/// timeout rewritten to 1 s): only the proxy's 1 s analysis clock can notice it.
@Suite(.serialized) struct LiveSpecTests {
    static func run(_ proxyArguments: [String]) throws -> (finding: String?, stderr: [String], status: Int32?) {
        let (server, serverPort) = try ProxySimTests.simServer()
        defer { server.stop() }
        let (proxy, proxyPort, _) = try ProxySimTests.proxy(upstreamPort: serverPort,
                                                            proxyArguments + ["--fault", "activity-timeout:1"])
        defer { proxy.stop() }
        let client = try ProxySimTests.simClient(proxyPort: proxyPort, ["--bug", "no-ping", "--no-signin", "--duration", "30s"])
        defer { client.stop() }
        // Printed while the client is still connected, not only at shutdown.
        let finding = proxy.waitForLine(timeout: 30, stderr: true) { $0.contains("stale.ping-missing") }
        #expect(client.waitForExit(timeout: 0.1) == nil, "the client is still running when the finding shows")
        client.stop()
        proxy.signal(SIGINT)
        let status = proxy.waitForExit(timeout: 20)
        return (finding, proxy.errorOutput, status)
    }

    @Test func aBuggySimClientThroughALiveProxyPrintsTheFindingAsItHappens() throws {
        let (finding, lines, status) = try Self.run(["--live", "--spec", "bird"])
        let all = lines.joined(separator: "\n")
        let line = try #require(finding, "no finding in: \(all)")
        #expect(line.hasPrefix("+") && line.contains(" client-1 conn 1  ERROR stale.ping-missing: "), "\(line)")
        #expect(lines.contains { $0.hasPrefix("+") && $0.contains("client-1 conn 1  connecting -> connected") },
                "transitions shown with --live: \(all)")
        // One time format for the record lines and the analyzer's, and times never go back.
        let times = lines.filter { $0.hasPrefix("+") }.compactMap { Double($0.dropFirst().prefix { $0 != " " }) }
        #expect(times.count == lines.filter { $0.hasPrefix("+") }.count && times.count > 5)
        #expect(zip(times, times.dropFirst()).allSatisfy { $0 <= $1 }, "lines out of order: \(all)")
        #expect(!lines.contains { $0.hasPrefix("live: ") }, "\(all)")
        #expect(status == 0)
        let summary = try #require(lines.last { $0.hasPrefix("live analysis (spec bird): ") }, "\(all)")
        #expect(summary.hasPrefix("live analysis (spec bird): 1 client, 1 connection: ") && !summary.contains(" 0 errors"), "\(summary)")
    }

    @Test func specWithoutLivePrintsFindingsOnly() throws {
        let (finding, lines, status) = try Self.run(["--spec", "bird"])
        let all = lines.joined(separator: "\n")
        #expect(finding?.contains("client-1 conn 1  ERROR stale.ping-missing: ") == true, "\(all)")
        #expect(status == 0)
        #expect(!lines.contains { $0.contains("connecting ->") || $0.contains("new client") || $0.contains("open from") }, "no transitions: \(all)")
        #expect(lines.last?.hasPrefix("live analysis (spec bird): 1 client, 1 connection: ") == true, "\(all)")
    }

    @Test func anUnknownSpecIsRefusedBeforeListening() throws {
        let result = try runFaultline(["proxy", "--listen", "127.0.0.1:0", "--upstream", "ws://127.0.0.1:9",
                                       "--spec", "/nonexistent/spec.json"])
        #expect(result.status == 2)
        #expect(result.stderr.contains("--spec") && result.stderr.contains("/nonexistent/spec.json"), "\(result.stderr)")
        #expect(!result.stdout.contains("listening on"))
    }
}
