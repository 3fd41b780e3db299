import Foundation
import Glibc
import Testing
import TestSupport

/// The proxy at the terminal (issue 18 item 16): an unreachable plain-TCP upstream is
/// logged, and shutdown prints one summary line.
@Suite struct ProxyTerminalTests {
    @Test func unreachableUpstreamIsLoggedAndShutdownPrintsASummary() throws {
        let capture = TestEnvironment.temporaryDirectory("terminal").appendingPathComponent("s.jsonl").path
        let deadPort = TestEnvironment.freePort()
        let proxy = try ChildProcess.faultline(["proxy", "--listen", "127.0.0.1:0", "--upstream", "ws://127.0.0.1:\(deadPort)",
                                                "--record", capture])
        defer { proxy.stop() }
        let listening = try #require(proxy.waitForLine(timeout: 60) { $0.hasPrefix("listening on ") })
        let address = String(listening.dropFirst("listening on ".count))
        let curl = try runCommand("/usr/bin/curl", ["-s", "-o", "/dev/null", "-w", "%{http_code}", "--max-time", "30",
                                                    "-H", "Connection: Upgrade", "-H", "Upgrade: websocket",
                                                    "-H", "Sec-WebSocket-Version: 13", "-H", "Sec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==",
                                                    "http://\(address)/app/k"], timeout: 60)
        #expect(curl.stdout == "502", "curl: \(curl.stdout) \(curl.stderr)")
        let logged = proxy.waitForLine(timeout: 30, stderr: true) { $0.contains("conn 1: upstream 127.0.0.1:\(deadPort): ") }
        #expect(logged != nil, "stderr: \(proxy.errorOutput)")
        proxy.signal(SIGINT)
        #expect(proxy.waitForExit(timeout: 30) == 0)
        let summary = try #require(proxy.output.last)
        #expect(summary.hasPrefix("stopped after "), "\(proxy.output)")
        #expect(summary.contains(": 1 connection, 0 frames (0 from clients, 0 from the server), 0 faults fired; capture \(capture) ("),
                "\(summary)")
        let size = try FileManager.default.attributesOfItem(atPath: capture)[.size] as? Int ?? -1
        #expect(summary.hasSuffix("(\(size) bytes)") || summary.hasSuffix("KB)"), "\(summary) vs \(size) bytes")
    }
}
