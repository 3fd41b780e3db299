import ProxyShell
import Testing
import TestSupport
import Transport
import Vocabulary

/// An upstream that leads back to the proxy's own listener, directly or through other
/// proxies of the process, is refused at start.
@Suite struct SelfLoopTests {
    func address(_ text: String) -> HostPort { try! HostPort.parse(text).get() }

    @Test(arguments: [
        ("127.0.0.1:8080", "127.0.0.1:8080", true), ("localhost:8080", "127.0.0.1:8080", true),
        ("LOCALHOST:8080", "[::1]:8080", true), ("127.0.0.1:8080", "0.0.0.0:8080", true),
        ("127.0.0.5:8080", "0.0.0.0:8080", true), ("0.0.0.0:8080", "127.0.0.1:8080", true),
        ("[::1]:8080", "[::]:8080", true), ("example.com:8080", "example.com:8080", true),
        ("127.0.0.1:8081", "127.0.0.1:8080", false), ("127.0.0.2:8080", "127.0.0.1:8080", false),
        ("[::1]:8080", "127.0.0.1:8080", false), ("10.0.0.1:8080", "127.0.0.1:8080", false),
    ])
    func upstreamReachesListener(upstream: String, listener: String, reaches: Bool) {
        #expect(ProxyListeners.reaches(address(upstream), address(listener)) == reaches)
    }

    @Test func ringsThroughOtherProxiesAreFound() {
        var listeners = ProxyListeners()
        listeners.add(address("127.0.0.1:9001"), upstreams: [address("127.0.0.1:9002")])
        listeners.add(address("127.0.0.1:9002"), upstreams: [address("example.com:80"), address("localhost:9003")])
        #expect(listeners.loop(from: address("127.0.0.1:9003"), upstreams: [address("127.0.0.1:9001")])
                == [address("127.0.0.1:9001"), address("127.0.0.1:9002"), address("127.0.0.1:9003")])
        #expect(listeners.loop(from: address("127.0.0.1:9004"), upstreams: [address("127.0.0.1:9001")]) == nil)
        // A ring among the others that does not come back to the new one is not its loop.
        listeners.add(address("127.0.0.1:9003"), upstreams: [address("127.0.0.1:9001")])
        #expect(listeners.loop(from: address("127.0.0.1:9005"), upstreams: [address("127.0.0.1:9001")]) == nil)
        // 9002 leads back to itself through 9001; once 9003 is gone, 9001 -> 9002 -> (nothing).
        #expect(listeners.loop(from: address("127.0.0.1:9002"), upstreams: [address("127.0.0.1:9001")])
                == [address("127.0.0.1:9001"), address("127.0.0.1:9002")])
        listeners.remove(address("127.0.0.1:9002"))
        #expect(listeners.loop(from: address("127.0.0.1:9006"), upstreams: [address("127.0.0.1:9001")]) == nil)
    }

    @Test func aServerWhoseUpstreamIsItselfDoesNotStart() throws {
        let loop = try EventLoop()
        defer { loop.close() }
        let port = Int(TestEnvironment.freePort())
        let server = ProxyServer(loop: loop, settings: ProxySettings(listen: address("127.0.0.1:\(port)"),
                                                                     upstream: UpstreamURL(host: "localhost", port: port)))
        let message = try #require(startError(server)).description
        #expect(message.contains("leads back to this proxy's own listener 127.0.0.1:\(port)"))
        // Nothing was left listening: the port can be bound again.
        let again = ProxyServer(loop: loop, settings: ProxySettings(listen: address("127.0.0.1:\(port)"),
                                                                    upstream: UpstreamURL(host: "127.0.0.1", port: 1)))
        #expect(throws: Never.self) { try again.start() }
        again.stop()
    }

    @Test func aRingOfTwoServersIsRefusedAtTheSecond() throws {
        let loop = try EventLoop()
        defer { loop.close() }
        let second = Int(TestEnvironment.freePort())
        let first = ProxyServer(loop: loop, settings: ProxySettings(listen: address("127.0.0.1:0"),
                                                                    upstream: UpstreamURL(host: "127.0.0.1", port: second)))
        let firstAddress = try first.start()
        let firstPort = try #require(Int(firstAddress.split(separator: ":").last ?? ""))
        let ring = ProxyServer(loop: loop, settings: ProxySettings(listen: address("127.0.0.1:\(second)"),
                                                                   upstream: UpstreamURL(host: "localhost", port: firstPort)))
        let message = try #require(startError(ring)).description
        #expect(message.contains("own listener 127.0.0.1:\(second) through \(firstAddress)"))
        // Once the first is stopped, nothing leads back any more.
        first.stop()
        #expect(throws: Never.self) { try ring.start() }
        ring.stop()
    }

    func startError(_ server: ProxyServer) -> ProxyStartError? {
        do { _ = try server.start(); server.stop(); return nil } catch { return error }
    }
}
