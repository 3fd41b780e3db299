import Capture
import Foundation
import Glibc
import JSON
import Testing
import TestSupport

/// Real `faultline proxy` processes whose upstream leads back to themselves: refused at
/// start when the process can see it, answered 508 after one round when only the `Via`
/// header shows it. Either way one client connection stays one or two, not an endless chain.
@Suite struct SelfLoopEndToEndTests {
    static let request = "GET /app/key?protocol=7 HTTP/1.1\r\nHost: 127.0.0.1\r\nUpgrade: websocket\r\nConnection: Upgrade\r\n"
        + "Sec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==\r\nSec-WebSocket-Version: 13\r\n\r\n"

    @Test func aProxyWhoseUpstreamIsItselfExits2() throws {
        let port = TestEnvironment.freePort()
        let run = try runFaultline(["proxy", "--listen", "127.0.0.1:\(port)", "--upstream", "ws://localhost:\(port)/ws"], timeout: 30)
        #expect(run.status == 2)
        #expect(run.stderr.contains("leads back to this proxy's own listener 127.0.0.1:\(port)"), "stderr: \(run.stderr)")
    }

    @Test func aRingOfTwoProcessesAnswers508AfterOneRound() throws {
        let directory = TestEnvironment.temporaryDirectory("faultline-selfloop")
        let (portA, portB) = (TestEnvironment.freePort(), TestEnvironment.freePort())
        let captureA = directory.appendingPathComponent("a.jsonl").path, captureB = directory.appendingPathComponent("b.jsonl").path
        let a = try ChildProcess.faultline(["proxy", "--listen", "127.0.0.1:\(portA)", "--upstream", "ws://127.0.0.1:\(portB)",
                                            "--record", captureA])
        defer { a.stop() }
        _ = try listeningPort(of: a, "proxy A")
        let b = try ChildProcess.faultline(["proxy", "--listen", "127.0.0.1:\(portB)", "--upstream", "ws://127.0.0.1:\(portA)",
                                            "--record", captureB])
        defer { b.stop() }
        _ = try listeningPort(of: b, "proxy B")

        let client = try RawSocket(port: Int(portA), receiveTimeout: 20)
        #expect(client.send(Array(Self.request.utf8)))
        let answer = client.text
        #expect(answer.hasPrefix("HTTP/1.1 508 Loop Detected\r\n"), "answer: \(answer)")
        #expect(answer.contains("loop detected"))

        let a1 = try stopRecordingProxy(a, capture: captureA), b1 = try stopRecordingProxy(b, capture: captureB)
        // A: the client, then B's forward of it (answered 508 by A itself). B: A's forward.
        #expect(a1.opens.count == 2 && b1.opens.count == 1)
        #expect(a1.upgrades.compactMap(\.status) == [508, 508])
        #expect(b1.upgrades.compactMap(\.status) == [508])
        // What was recorded is what the client sent: no Via on the first request, A's on the second.
        let requests = a1.upgrades.filter { $0.status == nil }
        #expect(requests.first?.header("Via") == nil)
        #expect(requests.last?.header("Via")?.hasPrefix("1.1 faultline-") == true)
    }

    @Test func theToxiproxyAPIRefusesAProxyWhoseUpstreamIsItsOwnListen() throws {
        let proxy = try ChildProcess.faultline(["proxy", "--listen", "127.0.0.1:0", "--upstream", "ws://127.0.0.1:1",
                                                "--toxiproxy-api", "127.0.0.1:0"])
        defer { proxy.stop() }
        let line = try #require(proxy.waitForLine(timeout: 20) { $0.hasPrefix("toxiproxy API on http://") }, "\(proxy.output)")
        let apiPort = try #require(line.split(separator: ":").last.flatMap { Int($0) })
        let port = TestEnvironment.freePort()
        let body = #"{"name":"loop","listen":"127.0.0.1:\#(port)","upstream":"localhost:\#(port)"}"#
        let api = try RawSocket(port: apiPort, receiveTimeout: 20)
        #expect(api.send(Array(("POST /proxies HTTP/1.1\r\nHost: 127.0.0.1:\(apiPort)\r\nContent-Type: application/json\r\n"
                                + "Content-Length: \(body.utf8.count)\r\nConnection: close\r\n\r\n" + body).utf8)))
        let answer = api.text
        #expect(answer.hasPrefix("HTTP/1.1 400"), "answer: \(answer)")
        #expect(answer.contains("leads back to this proxy's own listener 127.0.0.1:\(port)"))
    }
}
