import Foundation
import Glibc
import Sim
import TestSupport
import Testing

/// `faultline sim server` and `faultline sim client` as processes on loopback: the server is
/// killed and restarted, and the client must come back through backoff.
@Suite(.serialized) struct SimProcessTests {
    static func startServer(port: UInt16, _ extra: [String] = []) throws -> ChildProcess {
        let server = try ChildProcess.faultline(["sim", "server", "--listen", "127.0.0.1:\(port)", "--event-interval", "200ms", "--seed", "4"] + extra)
        let ready = server.waitForLine(timeout: 10) { $0.hasPrefix("listening on ") }
        try #require(ready == "listening on 127.0.0.1:\(port)", "server output: \(server.output) \(server.errorOutput)")
        return server
    }

    @Test func serverRestartClientReconnectsWithBackoff() throws {
        try #require(FileManager.default.isExecutableFile(atPath: TestEnvironment.faultlineBinary))
        let port = TestEnvironment.freePort()
        var server = try Self.startServer(port: port)
        let client = try ChildProcess.faultline([
            "sim", "client", "--url", "ws://127.0.0.1:\(port)/app/sim-key", "--seed", "11",
            "--backoff-base", "200ms", "--backoff-cap", "1s", "--duration", "30s", "-v",
        ])
        defer { client.stop(); server.stop() }
        try #require(client.waitForLine(timeout: 10) { $0.contains("connecting -> connected (socket ") } != nil,
                     "client: \(client.output) \(client.errorOutput)")
        #expect(client.waitForLine(timeout: 10, stderr: true) { $0 == "client 1: event sim-tick on private-chat" } != nil)

        server.stop()  // SIGKILL: the kernel ends the socket, no close frame
        #expect(client.waitForLine(timeout: 10) { $0.hasPrefix("client 1: connected -> unavailable (connection ") } != nil,
                "client: \(client.output)")
        // With the server gone, attempts keep failing; each waits within its bound.
        #expect(client.waitForLine(timeout: 10) { $0.contains("(attempt 3, bound ") } != nil, "client: \(client.output)")
        server = try Self.startServer(port: port)
        let back = client.waitForLine(timeout: 15) { line in
            line.contains("connecting -> connected") && client.output.filter { $0.contains("-> connected") }.count >= 2
        }
        #expect(back != nil, "client: \(client.output)")
        // It subscribed again on the new server and events flow again.
        let subscribed = client.errorOutput.filter { $0 == "client 1: subscribed private-chat" }.count
        #expect(subscribed >= 1)
        #expect(client.waitForLine(timeout: 10, stderr: true) { _ in
            client.errorOutput.filter { $0 == "client 1: subscribed private-chat" }.count == 2
        } != nil, "stderr: \(client.errorOutput)")

        for line in client.output where line.contains("-> unavailable") {
            let delay = try #require(Self.seconds(after: "retry in ", in: line))
            let bound = try #require(Self.seconds(after: "bound ", in: line))
            #expect(delay >= 0 && delay <= bound, "\(line)")
            #expect(bound <= 1.0, "cap 1 s: \(line)")
        }
        client.signal(SIGINT)
        #expect(client.waitForExit(timeout: 10) == 0)
        #expect(client.output.last?.hasSuffix("-> disconnected (disconnect())") == true, "\(client.output)")
    }

    @Test func gracefulServerStopReachesEveryClient() throws {
        try #require(FileManager.default.isExecutableFile(atPath: TestEnvironment.faultlineBinary))
        let port = TestEnvironment.freePort()
        let server = try Self.startServer(port: port)
        let client = try ChildProcess.faultline([
            "sim", "client", "--url", "ws://127.0.0.1:\(port)/app/sim-key", "--clients", "3", "--seed", "5",
            "--backoff-base", "200ms", "--backoff-cap", "1s", "--duration", "30s",
        ])
        defer { client.stop(); server.stop() }
        for number in 1...3 {
            #expect(client.waitForLine(timeout: 10) { $0.hasPrefix("client \(number): connecting -> connected (socket ") } != nil,
                    "client \(number): \(client.output)")
        }
        server.signal(SIGINT)
        #expect(server.waitForExit(timeout: 10) == 0)
        for number in 1...3 {
            let line = client.waitForLine(timeout: 10) {
                $0.hasPrefix("client \(number): connected -> unavailable (closed 1001 \"server shutting down\"; retry in ")
            }
            #expect(line != nil, "client \(number): \(client.output)")
        }
        client.signal(SIGTERM)
        #expect(client.waitForExit(timeout: 10) == 0)
    }

    @Test func refusedClientPrintsFailedAndExitsCleanly() throws {
        try #require(FileManager.default.isExecutableFile(atPath: TestEnvironment.faultlineBinary))
        let port = TestEnvironment.freePort()
        let server = try Self.startServer(port: port, ["--refuse-code", "4009"])
        defer { server.stop() }
        let result = try runFaultline(["sim", "client", "--url", "ws://127.0.0.1:\(port)/app/sim-key", "--duration", "1s", "--seed", "1"], timeout: 20)
        #expect(result.status == 0)
        #expect(result.stdout.contains("client 1: connecting -> failed (closed 4009"), "\(result.stdout)")
        #expect(!result.stdout.contains("unavailable"))
    }

    @Test func badCommandLinesExitWith2() throws {
        try #require(FileManager.default.isExecutableFile(atPath: TestEnvironment.faultlineBinary))
        let badBug = try runFaultline(["sim", "client", "--url", "ws://127.0.0.1:1/app/k", "--bug", "no-such-bug"])
        #expect(badBug.status == 2)
        #expect(badBug.stderr.contains("no-jitter"), "lists the valid names: \(badBug.stderr)")
        let badURL = try runFaultline(["sim", "client", "--url", "http://x/app/k"])
        #expect(badURL.status == 2 && badURL.stderr.contains("--url"))
        let badListen = try runFaultline(["sim", "server", "--listen", "nowhere"])
        #expect(badListen.status == 2 && badListen.stderr.contains("--listen"))
        let badCode = try runFaultline(["sim", "server", "--listen", "127.0.0.1:0", "--refuse-code", "1006"])
        #expect(badCode.status == 2 && badCode.stderr.contains("--refuse-code"))
        let help = try runFaultline(["sim", "client", "--help"])
        for bug in SimBug.allCases {
            #expect(help.stdout.contains(bug.rawValue), "\(bug)")
            #expect(help.stdout.contains(bug.ruleID))
        }
    }
}

extension SimProcessTests {
    /// The number of seconds after `marker` in a line such as "retry in 0.734 s (attempt 2, bound 1.000 s)".
    static func seconds(after marker: String, in line: String) -> Double? {
        guard let range = line.range(of: marker) else { return nil }
        return Double(line[range.upperBound...].prefix { $0.isNumber || $0 == "." })
    }
}
