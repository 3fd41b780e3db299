import Foundation
import Testing
@testable import Transport

/// Flow control and failure timing of `TLSConnection`: pausing holds back plaintext that
/// OpenSSL already decrypted, a silent server times the handshake out, a loop shut down
/// mid-handshake completes it with an error.
@Suite(.serialized)
struct TLSFlowTests {
    /// The server sends `payload` (then closes if `serverCloses`); the client pauses after
    /// every chunk for a millisecond. A 256 KiB read buffer makes one TCP read hold several
    /// 64 KiB plaintext batches, so resuming must deliver what OpenSSL already holds even
    /// when no more bytes come from the socket.
    func pausingReader(serverCloses: Bool) throws -> (received: [UInt8], payload: [UInt8], readsWhilePaused: Int,
                                                     pauses: Int, ends: [StreamEnd], endedEarly: Bool) {
        let files = try TLSFiles()
        let loop = try EventLoop(readBufferSize: 256 * 1024)
        let payload = (0..<2_000_000).map { UInt8(truncatingIfNeeded: $0 &* 31 &+ 7) }
        var serverSide: [TLSConnection] = []
        let listener = try TLSListener(loop: loop, port: 0, context: try files.serverContext()) { connection in
            serverSide.append(connection)
            connection.write(payload)
            if serverCloses { connection.closeAfterFlush() }
        }
        var received: [UInt8] = []
        var paused = false
        var readsWhilePaused = 0
        var pauses = 0
        var ends: [StreamEnd] = []
        var endedEarly = false
        TLSConnector.connect(loop: loop, host: "127.0.0.1", port: listener.port,
                             context: try TLSContext.client(caFile: files.caFile), serverName: "localhost") { result in
            guard case .success(let connection) = result else { Issue.record("\(result)"); loop.stop(); return }
            connection.onRead = { bytes in
                if paused { readsWhilePaused += 1 }
                received += bytes
                if !serverCloses && received.count == payload.count {
                    connection.close()
                    loop.stop()
                    return
                }
                paused = true
                pauses += 1
                connection.pauseReading()
                _ = loop.schedule(after: 1_000) {
                    paused = false
                    connection.resumeReading()
                }
            }
            connection.onEnd = { end in
                if received.count < payload.count || paused { endedEarly = true }
                ends.append(end)
                connection.close()
                loop.stop()
            }
        }
        runBounded(loop, limit: 30_000_000)
        return (received, payload, readsWhilePaused, pauses, ends, endedEarly)
    }

    @Test func pausedReadingHoldsBackDecryptedPlaintextUntilResumed() throws {
        let run = try pausingReader(serverCloses: false)
        let (readsWhilePaused, pauses) = (run.readsWhilePaused, run.pauses)
        #expect(readsWhilePaused == 0)
        #expect(pauses > 1)
        let (count, expected) = (run.received.count, run.payload.count)
        #expect(count == expected)
        let same = run.received == run.payload
        #expect(same)
        let ends = run.ends
        #expect(ends.isEmpty)
    }

    @Test func theEndComesAfterTheLastPlaintextEvenWhenPaused() throws {
        let run = try pausingReader(serverCloses: true)
        #expect(run.readsWhilePaused == 0)
        let same = run.received == run.payload
        #expect(same)
        let ends = run.ends
        #expect(ends == [.fin])
        let endedEarly = run.endedEarly
        #expect(!endedEarly, "onEnd came while plaintext was still held back")
    }

    @Test func aServerThatNeverAnswersTimesTheHandshakeOut() throws {
        let loop = try EventLoop()
        var silent: [TCPConnection] = []
        let listener = try TCPListener(loop: loop, port: 0) { connection in
            silent.append(connection)
            connection.onRead = { _ in }  // swallow the ClientHello, answer nothing
        }
        var failure: TransportError?
        TLSConnector.connect(loop: loop, host: "127.0.0.1", port: listener.port,
                             context: try TLSContext.client(insecure: true), timeout: 200_000) { result in
            if case .failure(let error) = result { failure = error }
            loop.stop()
        }
        runBounded(loop)
        #expect(failure?.message == "TLS handshake with 127.0.0.1:\(listener.port) failed: timed out")
    }

    @Test func aPlainServerIsAWrongVersionNumber() throws {
        let loop = try EventLoop()
        let listener = try TCPListener(loop: loop, port: 0) { connection in
            connection.onRead = { _ in
                connection.write(Array("HTTP/1.1 400 Bad Request\r\nContent-Length: 0\r\n\r\n".utf8))
            }
            connection.onEnd = { _ in connection.close() }
        }
        var failure: TransportError?
        TLSConnector.connect(loop: loop, host: "127.0.0.1", port: listener.port,
                             context: try TLSContext.client(insecure: true)) { result in
            if case .failure(let error) = result { failure = error }
            loop.stop()
        }
        runBounded(loop)
        #expect(failure?.message.hasSuffix("failed: wrong version number") == true, "\(String(describing: failure))")
    }

    @Test func closingTheLoopMidHandshakeCompletesWithAnError() throws {
        let loop = try EventLoop()
        var silent: [TCPConnection] = []
        let listener = try TCPListener(loop: loop, port: 0) { connection in
            silent.append(connection)
            connection.onRead = { _ in loop.stop() }  // the ClientHello arrived: stop mid-handshake
        }
        var results: [String] = []
        TLSConnector.connect(loop: loop, host: "127.0.0.1", port: listener.port,
                             context: try TLSContext.client(insecure: true)) { result in
            switch result {
            case .success: results.append("success")
            case .failure(let error): results.append(error.message)
            }
        }
        runBounded(loop)  // closes the loop, and with it the connection in its handshake
        #expect(results.count == 1)
        #expect(results.first?.hasSuffix("failed: connection closed") == true, "\(results)")
    }
}
