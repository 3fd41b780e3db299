import Foundation
import Testing
import TestSupport

/// The control API's token: required for a remote API, and kept off the command line
/// (environment or file) for `proxy` and `ctl` alike (issue 15, item 18).
@Suite(.serialized) struct ControlTokenTests {
    @Test func aRemoteAPIWithoutATokenIsRefusedWithStatus2() throws {
        let run = try runFaultline(["proxy", "--listen", "127.0.0.1:0", "--upstream", "ws://127.0.0.1:9",
                                    "--control", "0.0.0.0:0", "--control-allow-remote"])
        #expect(run.status == 2)
        #expect(run.stderr.contains("--control-allow-remote needs a token"), "\(run.stderr)")
    }

    @Test func theTokenComesFromAFileOrTheEnvironmentForProxyAndCtl() throws {
        let directory = TestEnvironment.temporaryDirectory("faultline-token")
        let file = directory.appendingPathComponent("token").path
        try "file-token\n".write(toFile: file, atomically: true, encoding: .utf8)
        // The proxy reads the environment; ctl reads the file.
        let proxy = try ChildProcess.faultline(["proxy", "--listen", "127.0.0.1:0", "--upstream", "ws://127.0.0.1:9",
                                                "--control", "127.0.0.1:0"],
                                               environment: ["FAULTLINE_CONTROL_TOKEN": "file-token"])
        defer { proxy.stop() }
        let line = try #require(proxy.waitForLine(timeout: 20) { $0.hasPrefix("control API on http://") },
                                "no control line: \(proxy.errorOutput)")
        let address = String(line.dropFirst("control API on http://".count))
        #expect(try RawHTTP.request(address, "GET", "/rules").status == 401, "the environment's token is required")
        let withFile = try runFaultline(["ctl", "--control", address, "--token-file", file, "rules"], timeout: 30)
        #expect(withFile.status == 0, "\(withFile.stderr)")
        let without = try runFaultline(["ctl", "--control", address, "rules"], timeout: 30)
        #expect(without.status == 1)
        #expect(!(try String(contentsOfFile: "/proc/\(proxy.pid)/cmdline", encoding: .isoLatin1)).contains("file-token"))

        // And the proxy from a file, with a remote address allowed.
        let remote = try ChildProcess.faultline(["proxy", "--listen", "127.0.0.1:0", "--upstream", "ws://127.0.0.1:9",
                                                 "--control", "0.0.0.0:0", "--control-allow-remote", "--control-token-file", file])
        defer { remote.stop() }
        let remoteLine = try #require(remote.waitForLine(timeout: 20) { $0.hasPrefix("control API on http://") },
                                      "no control line: \(remote.errorOutput)")
        let port = String(remoteLine.split(separator: ":").last ?? "")
        #expect(try RawHTTP.request("127.0.0.1:\(port)", "GET", "/rules", token: "file-token").status == 200)
    }
}
