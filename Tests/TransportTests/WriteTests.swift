import Testing
@testable import Transport

/// Write completions, writes after the end, and closing after a flush.
@Suite(.serialized)
struct WriteTests {
    @Test func completionsReportDeliveryAndWritesAfterCloseFail() throws {
        let loop = try EventLoop()
        var results: [String] = []
        var serverAddress = ""
        let listener = try TCPListener(loop: loop, port: 0) { connection in
            serverAddress = connection.remoteAddress
            connection.write(Array("kept".utf8)) { error in results.append("kept: \(error?.message ?? "ok")") }
            connection.closeAfterFlush()
            connection.write(Array("late".utf8)) { error in results.append("late: \(error?.message ?? "ok")") }
        }
        let client = ByteSink()
        TCPConnector.connect(loop: loop, host: "127.0.0.1", port: listener.port) { result in
            guard case .success(let connection) = result else { loop.stop(); return }
            connection.onRead = { client.bytes += $0 }
            connection.onEnd = { end in
                client.ends.append(end)
                connection.close()
                loop.schedule(after: 10_000) { loop.stop() }  // let the server's completions land
            }
        }
        runBounded(loop)
        #expect(client.bytes == Array("kept".utf8))
        #expect(client.ends == [.fin])
        #expect(results.sorted() == ["kept: ok", "late: write to \(serverAddress): connection closing"])
    }

    @Test func writeAfterShutdownFailsButReadingGoesOn() throws {
        let loop = try EventLoop()
        var lateResult: String?
        let server = ByteSink()
        let listener = try TCPListener(loop: loop, port: 0) { connection in
            connection.shutdown()
            connection.write(Array("after fin".utf8)) { lateResult = $0?.message }
            connection.onRead = { server.bytes += $0 }
            connection.onEnd = { end in server.ends.append(end); connection.close(); loop.stop() }
        }
        TCPConnector.connect(loop: loop, host: "127.0.0.1", port: listener.port) { result in
            guard case .success(let connection) = result else { loop.stop(); return }
            connection.onEnd = { _ in
                connection.write(Array("still talking".utf8))
                connection.closeAfterFlush()
            }
        }
        runBounded(loop)
        #expect(lateResult?.hasSuffix("already shut down for writing") == true)
        #expect(server.bytes == Array("still talking".utf8))
        #expect(server.ends == [.fin])
    }

    @Test func pausedReadingHoldsDataUntilResumed() throws {
        let loop = try EventLoop()
        var readWhilePaused = 0
        let sink = ByteSink()
        let listener = try TCPListener(loop: loop, port: 0) { connection in
            connection.pauseReading()
            connection.onRead = { sink.bytes += $0 }
            connection.onEnd = { end in sink.ends.append(end); connection.close(); loop.stop() }
            loop.schedule(after: 50_000) {
                readWhilePaused = sink.bytes.count
                connection.resumeReading()
            }
        }
        TCPConnector.connect(loop: loop, host: "127.0.0.1", port: listener.port) { result in
            guard case .success(let connection) = result else { loop.stop(); return }
            connection.write(Array("held".utf8))
            connection.closeAfterFlush()
        }
        runBounded(loop)
        #expect(readWhilePaused == 0)
        #expect(sink.bytes == Array("held".utf8))
        #expect(sink.ends == [.fin])
    }
}
