import ControlAPI
import Glibc
import Testing
import Transport

/// Idle and slow clients cannot lock the control API out (issue 15, item 18).
@Suite struct ServerStarvationTests {
    /// 0 at EOF (the server closed), -1 at the receive timeout, else the bytes read.
    static func firstRead(_ fd: Int32) -> Int {
        var byte: UInt8 = 0
        return recv(fd, &byte, 1, 0)
    }

    @Test func idleConnectionsFillingEverySlotDoNotStarveARequest() throws {
        let backend = FakeBackend()
        let outcome = Shared<(status: Int?, evictedEOF: Bool)>((nil, false))
        try withServer(backend: backend, configure: { $0.maxConnections = 8 }) { port in
            let idle = (0..<8).map { _ in PosixClient.connect(port: port) }
            defer { idle.forEach { close($0) } }
            let status = try? ControlClient(address: "127.0.0.1:\(port)", timeout: 5).send("GET", "/health").status
            outcome.update { $0 = (status, Self.firstRead(idle[0]) == 0) }
        }
        #expect(outcome.current.status == 200)
        #expect(outcome.current.evictedEOF, "the oldest idle client made room")
    }

    @Test func aSilentClientIsClosedAtTheIdleTimeout() throws {
        let backend = FakeBackend()
        let eof = Shared<Bool>(false)
        try withServer(backend: backend, configure: { $0.idleTimeout = 100_000 }) { port in
            let fd = PosixClient.connect(port: port)   // 5 s receive timeout, requestTimeout 10 s
            defer { close(fd) }
            PosixClient.send(fd, "GET /health HTTP/1.1\r\n")
            eof.update { $0 = Self.firstRead(fd) == 0 }
        }
        #expect(eof.current)
    }

    @Test func aRemoteAPIWithoutATokenIsRefused() throws {
        let loop = try EventLoop()
        defer { loop.close() }
        do {
            _ = try ControlServer.start(loop: loop, host: "0.0.0.0", port: 0, token: nil, allowRemote: true, backend: FakeBackend())
            Issue.record("a remote control API without a token started")
        } catch {
            #expect("\(error)".contains("needs a token"))
        }
    }
}
