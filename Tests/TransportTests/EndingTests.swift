import Glibc
import Testing
@testable import Transport

/// FIN, RST and errors: how streams end, seen from both sides.
@Suite(.serialized)
struct EndingTests {
    @Test func halfCloseLetsThePeerStillSend() throws {
        let loop = try EventLoop()
        let remote = loop.remote
        let sink = ByteSink()
        let listener = try TCPListener(loop: loop, port: 0) { connection in
            connection.write(Array("ping".utf8))
            connection.shutdown()
            connection.onRead = { sink.bytes += $0 }
            connection.onEnd = { end in
                sink.ends.append(end)
                connection.close()
                loop.stop()
            }
        }
        let peerSaw = Shared<[PosixPeer.Received]>([])
        let port = listener.port
        onThread {
            guard let peer = PosixPeer.connect(port: port) else { remote.stop(); return }
            var seen: [PosixPeer.Received] = []
            while true {
                let next = peer.receive()
                seen.append(next)
                guard case .bytes = next else { break }
            }
            peerSaw.set(seen)
            _ = peer.send(Array("pong after fin".utf8))
            peer.close()
        }
        runBounded(loop)
        let seen = peerSaw.get
        var received: [UInt8] = []
        for case .bytes(let bytes) in seen { received += bytes }
        #expect(received == Array("ping".utf8))
        #expect(seen.last == .eof)
        #expect(sink.bytes == Array("pong after fin".utf8))
        #expect(sink.ends == [.fin])
    }

    @Test func peerAbortIsReportedAsReset() throws {
        let loop = try EventLoop()
        let remote = loop.remote
        let sink = ByteSink()
        var closed = false
        let listener = try TCPListener(loop: loop, port: 0) { connection in
            connection.write(Array("ready".utf8))
            connection.onEnd = { sink.ends.append($0) }
            connection.onClose = { closed = true; loop.stop() }
        }
        let port = listener.port
        onThread {
            guard let peer = PosixPeer.connect(port: port) else { remote.stop(); return }
            _ = peer.receive(count: 5)  // the server has accepted and is reading
            peer.abort()
        }
        runBounded(loop)
        #expect(sink.ends == [.reset])
        #expect(closed, "a reset closes the connection by itself")
    }

    @Test func ourResetReachesAPosixPeerAsECONNRESET() throws {
        let loop = try EventLoop()
        let remote = loop.remote
        let listener = try TCPListener(loop: loop, port: 0) { connection in
            connection.onRead = { _ in connection.reset() }
        }
        let peerSaw = Shared<PosixPeer.Received?>(nil)
        let port = listener.port
        onThread {
            defer { remote.stop() }
            guard let peer = PosixPeer.connect(port: port) else { return }
            _ = peer.send(Array("go".utf8))
            peerSaw.set(peer.receive())
            peer.close()
        }
        runBounded(loop)
        #expect(peerSaw.get == .failed(errno: ECONNRESET))
    }

    @Test func finThenOrderlyClose() throws {
        // The client sends and half-closes; the server sees the data, then .fin, and can
        // still answer before closing.
        let loop = try EventLoop()
        let server = ByteSink()
        let client = ByteSink()
        let listener = try TCPListener(loop: loop, port: 0) { connection in
            connection.onRead = { server.bytes += $0 }
            connection.onEnd = { end in
                server.ends.append(end)
                connection.write(Array("answer".utf8))
                connection.closeAfterFlush()
            }
        }
        TCPConnector.connect(loop: loop, host: "127.0.0.1", port: listener.port) { result in
            guard case .success(let connection) = result else { loop.stop(); return }
            connection.write(Array("question".utf8))
            connection.shutdown()
            connection.onRead = { client.bytes += $0 }
            connection.onEnd = { end in
                client.ends.append(end)
                connection.close()
                loop.stop()
            }
        }
        runBounded(loop)
        #expect(server.bytes == Array("question".utf8))
        #expect(server.ends == [.fin])
        #expect(client.bytes == Array("answer".utf8))
        #expect(client.ends == [.fin])
    }
}
