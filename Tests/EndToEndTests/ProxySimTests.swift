import Capture
import Foundation
import Glibc
import Testing
import TestSupport

/// The simulator peers through the proxy: the reference client's lifecycle reacting to the
/// proxy's faults, and surviving a server restart.
@Suite(.serialized) struct ProxySimTests {
    /// `faultline sim server` on `port` (0: any), ready.
    static func simServer(port: Int = 0) throws -> (process: ChildProcess, port: Int) {
        let server = try ChildProcess.faultline(["sim", "server", "--listen", "127.0.0.1:\(port)", "--event-interval", "0"])
        return (server, try listeningPort(of: server, "sim server"))
    }

    /// `faultline proxy` recording to a fresh file in front of `upstreamPort`.
    static func proxy(upstreamPort: Int, _ arguments: [String]) throws -> (process: ChildProcess, port: Int, capture: String) {
        let capture = TestEnvironment.temporaryDirectory("faultline-sim").appendingPathComponent("capture.jsonl").path
        let proxy = try ChildProcess.faultline(["proxy", "--listen", "127.0.0.1:0", "--upstream",
                                                "ws://127.0.0.1:\(upstreamPort)", "--record", capture] + arguments)
        return (proxy, try listeningPort(of: proxy, "proxy"), capture)
    }

    static func simClient(proxyPort: Int, _ arguments: [String]) throws -> ChildProcess {
        try ChildProcess.faultline(["sim", "client", "--url", "ws://127.0.0.1:\(proxyPort)/app/sim-key",
                                    "--channels", "news", "--seed", "7"] + arguments)
    }

    static func stopProxy(_ proxy: ChildProcess, capture: String) throws -> CaptureContents {
        proxy.signal(SIGINT)
        #expect(proxy.waitForExit(timeout: 20) == 0)
        return try CaptureContents(path: capture)
    }

    @Test func stalledPongsMakeTheSimClientCloseWith4201AndReconnectAtOnce() throws {
        let (server, serverPort) = try Self.simServer()
        defer { server.stop() }
        let (proxy, proxyPort, path) = try Self.proxy(upstreamPort: serverPort,
                                                      ["--fault", "activity-timeout:1", "--fault", "stall-pongs"])
        defer { proxy.stop() }
        let client = try Self.simClient(proxyPort: proxyPort, ["--pong-timeout", "1s", "--duration", "30s"])
        defer { client.stop() }
        let stale = client.waitForLine(timeout: 30) { $0.contains("closed 4201") }
        #expect(stale?.contains("reconnecting at once") == true, "client: \(client.output)")
        #expect(client.waitForLine(timeout: 20) { $0.contains("connecting -> connected") && $0 != client.output.first { $0.contains("-> connected") } } != nil)
        client.stop()
        let capture = try Self.stopProxy(proxy, capture: path)
        #expect(capture.opens.count >= 2)
        let close = try #require(capture.frames.first { $0.opcode == .close })
        #expect(close.conn == 1 && close.from == .client && close.closeCode == 4201)
        let rewritten = capture.frames.filter { $0.conn == 1 && $0.action == .injected }
        #expect(rewritten.count == 1 && rewritten.first?.fault == "activity-timeout:1")
        #expect(capture.frames.contains { $0.conn == 1 && $0.from == .server && $0.action == .dropped && $0.fault == "stall-pongs" })
    }

    @Test func a4009TerminationLeavesTheSimClientFailedWithoutRetry() throws {
        let (server, serverPort) = try Self.simServer()
        defer { server.stop() }
        let rule = "close:4009,reason=terminated,on=bird:signin_success"
        let (proxy, proxyPort, path) = try Self.proxy(upstreamPort: serverPort, ["--fault", rule])
        defer { proxy.stop() }
        let client = try Self.simClient(proxyPort: proxyPort, ["--backoff-base", "100ms", "--duration", "3s"])
        defer { client.stop() }
        #expect(client.waitForExit(timeout: 30) != nil)
        let failed = client.output.filter { $0.contains("-> failed") }
        #expect(failed.count == 1, "client: \(client.output)")
        #expect(failed.first?.contains("4009") == true)
        let capture = try Self.stopProxy(proxy, capture: path)
        #expect(capture.opens.count == 1, "a failed client never comes back")
        #expect(capture.faults.map(\.kind) == ["close"])
        #expect(capture.frames.contains { $0.opcode == .close && $0.closeCode == 4009 && $0.action == .injected })
    }

    @Test func theSimClientSurvivesAServerRestartThroughTheProxy() throws {
        var (server, serverPort) = try Self.simServer()
        defer { server.stop() }
        let (proxy, proxyPort, path) = try Self.proxy(upstreamPort: serverPort, [])
        defer { proxy.stop() }
        let client = try Self.simClient(proxyPort: proxyPort, ["--backoff-base", "100ms", "--backoff-cap", "300ms",
                                                               "--duration", "60s"])
        defer { client.stop() }
        #expect(client.waitForLine(timeout: 20) { $0.contains("-> connected") } != nil)
        server.stop()   // SIGKILL: the server vanishes
        #expect(client.waitForLine(timeout: 20) { $0.contains("connected -> ") } != nil, "client: \(client.output)")
        (server, _) = try Self.simServer(port: serverPort)
        let reconnected = client.waitForLine(timeout: 30) { _ in
            client.output.filter { $0.contains("-> connected") }.count >= 2
        }
        #expect(reconnected != nil, "client: \(client.output)")
        client.stop()
        let capture = try Self.stopProxy(proxy, capture: path)
        let accepted = capture.upgrades.filter { $0.from == .server && $0.status == 101 }
        #expect(accepted.count >= 2)
        // While the server was down the proxy answered 502 or saw the upstream fail.
        #expect(capture.ends.contains { $0.side == .server })
    }
}
