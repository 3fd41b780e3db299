import Testing
@testable import Transport

/// client <-> relay <-> server, with a `TCPRelay` in the middle.
@Suite(.serialized)
struct RelayTests {
    /// Starts a relay listener forwarding to `serverPort`; returns its port.
    func relayListener(_ loop: EventLoop, to serverPort: Int, finished: @escaping (TCPRelay) -> Void) throws -> TCPListener {
        try TCPListener(loop: loop, port: 0) { inbound in
            inbound.pauseReading()
            TCPConnector.connect(loop: loop, host: "127.0.0.1", port: serverPort) { result in
                guard case .success(let outbound) = result else { inbound.reset(); return }
                let relay = TCPRelay(inbound, outbound)
                relay.onFinish = { finished(relay) }
            }
        }
    }

    @Test func bytesAndHalfClosesCrossTheRelay() throws {
        final class Outcome {
            var relayed = (0, 0)
            var relayFinished = false
            let client = ByteSink()
            var done: Bool { relayFinished && !client.ends.isEmpty }
        }
        let loop = try EventLoop()
        let server = try TCPListener(loop: loop, port: 0) { connection in
            connection.onRead = { connection.write($0) }  // echo
            connection.onEnd = { _ in connection.closeAfterFlush() }  // answer FIN with FIN
        }
        let outcome = Outcome()
        let relay = try relayListener(loop, to: server.port) { relay in
            outcome.relayed = (relay.bytesAToB, relay.bytesBToA)
            outcome.relayFinished = true
            if outcome.done { loop.stop() }
        }
        let message = [UInt8](repeating: 0x5a, count: 3 * 1024 * 1024)
        TCPConnector.connect(loop: loop, host: "127.0.0.1", port: relay.port) { result in
            guard case .success(let connection) = result else { loop.stop(); return }
            connection.onRead = { bytes in
                outcome.client.bytes += bytes
                if outcome.client.bytes.count == message.count { connection.shutdown() }
            }
            connection.onEnd = { end in
                outcome.client.ends.append(end)
                connection.close()
                if outcome.done { loop.stop() }
            }
            connection.write(message)
        }
        runBounded(loop)
        #expect(outcome.client.bytes == message)
        #expect(outcome.client.ends == [.fin])
        #expect(outcome.relayFinished)
        #expect(outcome.relayed == (message.count, message.count))
    }

    @Test func aResetCrossesTheRelay() throws {
        let loop = try EventLoop()
        let server = try TCPListener(loop: loop, port: 0) { connection in
            connection.onRead = { _ in connection.reset() }
        }
        let relay = try relayListener(loop, to: server.port) { _ in }
        let client = ByteSink()
        TCPConnector.connect(loop: loop, host: "127.0.0.1", port: relay.port) { result in
            guard case .success(let connection) = result else { loop.stop(); return }
            connection.onEnd = { client.ends.append($0) }
            connection.onClose = { loop.stop() }
            connection.write(Array("trigger".utf8))
        }
        runBounded(loop)
        #expect(client.ends == [.reset])
    }
}
