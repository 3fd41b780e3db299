import Foundation
import Testing
import TestSupport
@testable import Transport

/// Our TLS against Python's `ssl` (OpenSSL underneath, but Python's own settings and strict
/// checks), both ways: our client to a `websockets` wss:// server, Python's client to our listener.
@Suite(.serialized)
struct TLSPythonPeerTests {
    /// Connects to the Python wss:// echo server, upgrades by hand, sends one masked text
    /// frame and reads the echo. Returns the raw bytes after the 101 response, or the error.
    func exchange(port: Int, context: TLSContext, serverName: String) throws -> (reply: [UInt8], error: TransportError?, version: String) {
        let loop = try EventLoop()
        var received: [UInt8] = []
        var reply: [UInt8] = []
        var failure: TransportError?
        var version = ""
        let request = "GET / HTTP/1.1\r\nHost: \(serverName):\(port)\r\nUpgrade: websocket\r\nConnection: Upgrade\r\n"
            + "Sec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==\r\nSec-WebSocket-Version: 13\r\n\r\n"
        // "hello", masked with the all-zero key (a valid, if weak, mask).
        let frame: [UInt8] = [0x81, 0x85, 0, 0, 0, 0] + Array("hello".utf8)
        TLSConnector.connect(loop: loop, host: "127.0.0.1", port: port, context: context,
                             serverName: serverName, timeout: 5_000_000) { result in
            switch result {
            case .failure(let error):
                failure = error
                loop.stop()
            case .success(let connection):
                version = connection.protocolVersion
                connection.onRead = { bytes in
                    received += bytes
                    let separator = Array("\r\n\r\n".utf8)
                    guard let end = (0...max(0, received.count - 4)).first(where: { Array(received[$0..<min($0 + 4, received.count)]) == separator }) else { return }
                    let head = String(decoding: received[..<end], as: UTF8.self)
                    if reply.isEmpty, !head.hasPrefix("HTTP/1.1 101") { failure = TransportError("upgrade refused: \(head)"); loop.stop(); return }
                    reply = Array(received[(end + 4)...])
                    if reply.count >= 7 { connection.close(); loop.stop() }
                }
                connection.onEnd = { _ in connection.close(); loop.stop() }
                connection.write(Array(request.utf8))
                connection.write(frame)
            }
        }
        runBounded(loop)
        return (reply, failure, version)
    }

    func startServer(_ files: TLSFiles, _ extra: [String] = []) throws -> (ChildProcess, Int) {
        let server = try ChildProcess.python(TestEnvironment.path("Tests/Peers/tls_server.py"),
                                             ["--cert", files.certificateFile, "--key", files.keyFile] + extra)
        let ready = try #require(server.waitForLine { $0.hasPrefix("READY ") }, "tls_server.py did not start: \(server.errorOutput)")
        return (server, try #require(Int(ready.dropFirst(6))))
    }

    @Test func ourClientReachesAPythonWebSocketsTLSServer() throws {
        let files = try TLSFiles()
        let (server, port) = try startServer(files)
        defer { server.stop() }
        let result = try exchange(port: port, context: try TLSContext.client(caFile: files.caFile), serverName: "localhost")
        #expect(result.error == nil)
        #expect(result.version == "TLSv1.3")
        #expect(result.reply == [0x81, 0x05] + Array("hello".utf8))
    }

    @Test func tls12WithAKeyLogWritesClientRandomLines() throws {
        let files = try TLSFiles()
        let (server, port) = try startServer(files, ["--tls12"])
        defer { server.stop() }
        let path = files.directory.appendingPathComponent("keys.log").path
        let context = try TLSContext.client(caFile: files.caFile, keyLog: try TLSKeyLog(path: path))
        let result = try exchange(port: port, context: context, serverName: "localhost")
        #expect(result.error == nil)
        #expect(result.version == "TLSv1.2")
        #expect(result.reply == [0x81, 0x05] + Array("hello".utf8))
        let lines = try String(contentsOfFile: path, encoding: .utf8).split(separator: "\n")
        #expect(lines.count == 1)
        let fields = lines.first?.split(separator: " ") ?? []
        #expect(fields.first == "CLIENT_RANDOM")
        #expect(fields.count == 3 && fields[1].count == 64 && fields[2].count == 96, "\(lines)")
    }

    @Test func aPythonServerWithAnotherCAsCertificateIsRefusedWithTheReason() throws {
        let files = try TLSFiles()
        let other = try TLSFiles(label: "tls-other-ca")
        let (server, port) = try startServer(files)
        defer { server.stop() }
        let result = try exchange(port: port, context: try TLSContext.client(caFile: other.caFile), serverName: "localhost")
        #expect(result.error?.message == "TLS handshake with localhost:\(port) failed: certificate verify failed: unable to get local issuer certificate")
    }

    @Test func pythonsStrictClientAcceptsOurListenerAndCertificate() throws {
        let files = try TLSFiles()
        let loop = try EventLoop()
        let listener = try TLSListener(loop: loop, port: 0, context: try files.serverContext()) { connection in
            connection.onRead = { connection.write($0) }
            connection.onEnd = { _ in connection.closeAfterFlush() }
        }
        let port = listener.port
        // The Python client blocks; run it on another thread and stop the loop when it ends.
        let done = DispatchSemaphore(value: 0)
        nonisolated(unsafe) var lines: [String] = []
        let remote = loop.remote
        Thread.detachNewThread {
            if let client = try? ChildProcess.python(TestEnvironment.path("Tests/Peers/tls_client.py"),
                                                     ["--port", String(port), "--ca", files.caFile]) {
                _ = client.waitForExit(timeout: 10)
                lines = client.output + client.errorOutput
            }
            done.signal()
            remote.execute { $0.stop() }
        }
        runBounded(loop)
        _ = done.wait(timeout: .now() + 10)
        #expect(lines.contains("ECHO hello from python"), "\(lines)")
        #expect(lines.contains("VERSION TLSv1.3"), "\(lines)")
    }
}
