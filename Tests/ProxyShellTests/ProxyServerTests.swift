import Capture
import ControlAPI
import Foundation
import ProxyCore
import ProxyShell
import Testing
import TestSupport
import Vocabulary
import WebSocket

/// The proxy library in-process: a real WebSocket exchange through `ProxyServer` on an
/// ephemeral port, its capture, and its control contract, with no binary involved.
@Suite struct ProxyServerTests {
    @Test func relaysAWebSocketExchangeAndRecordsIt() throws {
        let directory = TestEnvironment.temporaryDirectory("proxyshell")
        let path = directory.appendingPathComponent("session.jsonl").path
        let harness = try ShellHarness(record: path)
        var client = try RawWebSocket(port: harness.port)
        #expect(client.responseHead().hasPrefix("HTTP/1.1 101"))
        let welcome = try #require(try client.nextFrame())
        #expect(welcome.opcode == .text)
        #expect(String(decoding: welcome.payload, as: UTF8.self).contains("connection_established"))

        // The control contract reads the open connection from the server itself.
        let open = harness.onLoop { server in (server.connectionSummaries().count, server.metrics().connectionsOpen) }
        #expect(open == (1, 1))
        #expect(harness.onLoop { $0.faultsChanged(connection: 999) } == false)

        client.send(opcode: 0x8, [0x03, 0xE8])   // close 1000
        let reply = try #require(try client.nextFrame())
        #expect(reply.opcode == .close)
        client.socket.shutdownWrite()
        #expect(harness.wait { $0.metrics().connectionsOpen == 0 })
        let metrics = harness.onLoop { $0.metrics() }
        #expect(metrics.connectionsTotal == 1)
        #expect(metrics.framesClientToServer == 1)
        #expect(metrics.framesServerToClient == 2)
        harness.stop()

        var reader = try CaptureReader(path: path)
        var frames: [Side: Int] = [:]
        var upgraded = false
        while let record = try reader.nextRecord() {
            if case .frame(let frame) = record { frames[frame.from, default: 0] += 1 }
            if case .upgrade(let upgrade) = record, upgrade.status == 101 { upgraded = true }
        }
        #expect(upgraded)
        #expect(frames == [.client: 1, .server: 2])
    }

    @Test func stopsCleanlyWithAConnectionOpen() throws {
        let harness = try ShellHarness()
        var client = try RawWebSocket(port: harness.port)
        #expect(client.responseHead().hasPrefix("HTTP/1.1 101"))
        _ = try client.nextFrame()
        harness.stop()
        // The loop closed the client's socket: EOF, not a hang.
        #expect(client.socket.readToEnd().ended)
    }
}

/// `--route`: a client is admitted once, when it is accepted; while its request head is read
/// it is a pending connection (evictable, bounded by the handshake timeout).
@Suite struct RouteAdmissionTests {
    static func routed(maxConnections: Int, maxPending: Int, handshakeTimeout: Int64 = 10_000_000) throws -> ShellHarness {
        try ShellHarness { settings, upstreamPort in
            var routes = ReverseRoutes()
            routes.table = UpstreamRoutes([UpstreamRoutes.parseMatch("127.0.0.1")!])
            routes.upstreams = [UpstreamURL(host: "127.0.0.1", port: upstreamPort)]
            settings.routes = routes
            settings.maxConnections = maxConnections
            settings.maxPending = maxPending
            settings.handshakeTimeout = handshakeTimeout
        }
    }

    @Test func aRoutedClientIsAdmittedOnlyOnce() throws {
        let harness = try Self.routed(maxConnections: 1, maxPending: 1)
        let idle = try RawSocket(port: harness.port)
        #expect(harness.wait { $0.routingConnections == 1 })
        // The one slot is pending (an idle reader): the newcomer evicts it at accept...
        var client = try RawWebSocket(port: harness.port)
        #expect(idle.firstLine() == "HTTP/1.1 503 Service Unavailable")
        // ...and is not admitted a second time when its route is known: it is relayed.
        #expect(client.responseHead().hasPrefix("HTTP/1.1 101"))
        #expect(try client.nextFrame()?.opcode == .text)
        let counts = harness.onLoop { ($0.metrics().connectionsTotal, $0.routingConnections) }
        #expect(counts == (1, 0))
        // Now the slot holds an established connection: the next client is refused.
        let late = try RawSocket(port: harness.port)
        #expect(late.firstLine() == "HTTP/1.1 503 Service Unavailable")
    }

    @Test func aSilentRoutedClientTimesOut() throws {
        let harness = try Self.routed(maxConnections: 10, maxPending: 10, handshakeTimeout: 200_000)
        let idle = try RawSocket(port: harness.port)
        #expect(idle.firstLine() == "HTTP/1.1 408 Request Timeout")
        #expect(harness.wait { $0.routingConnections == 0 })
    }
}
