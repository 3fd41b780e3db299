import CUV
import Glibc
import Testing
import TestSupport
@testable import Transport

@Suite(.serialized)
struct ConnectTests {
    /// Connects and returns the failure (nil if it connected).
    func failure(host: String, port: Int, timeout: Int64 = 5_000_000) throws -> TransportError? {
        let loop = try EventLoop()
        var outcome: TransportError?
        var finished = false
        TCPConnector.connect(loop: loop, host: host, port: port, timeout: timeout) { result in
            finished = true
            switch result {
            case .success(let connection): connection.close()
            case .failure(let error): outcome = error
            }
            loop.stop()
        }
        runBounded(loop)
        #expect(finished)
        return outcome
    }

    @Test func refusedNamesHostPortAndReason() throws {
        let port = Int(TestEnvironment.freePort())
        let error = try #require(try failure(host: "127.0.0.1", port: port))
        #expect(error.message == "connect to 127.0.0.1:\(port): connection refused")
        #expect(error.code == UV_ECONNREFUSED.rawValue)
    }

    @Test func unknownHostIsReportedWithoutBlocking() throws {
        let error = try #require(try failure(host: "faultline-no-such-host.invalid", port: 80))
        #expect(error.message.hasPrefix("connect to faultline-no-such-host.invalid:80: "))
        // A resolver that cannot be reached says "temporary failure" instead.
        #expect(error.message.hasSuffix("no such host") || error.message.hasSuffix("temporary failure in name resolution"))
    }

    @Test func unansweredConnectTimesOut() throws {
        let unanswering = try UnansweringListener()
        defer { unanswering.close() }
        let port = unanswering.port
        let error = try #require(try failure(host: "127.0.0.1", port: port, timeout: 300_000))
        #expect(error.message == "connect to 127.0.0.1:\(port): timed out")
    }

    @Test func listenerReportsAPortInUse() throws {
        let loop = try EventLoop()
        let first = try TCPListener(loop: loop, port: 0) { _ in }
        #expect(throws: TransportError("listen on 127.0.0.1:\(first.port): address already in use",
                                       code: UV_EADDRINUSE.rawValue)) {
            _ = try TCPListener(loop: loop, port: first.port) { _ in }
        }
        #expect(throws: TransportError.self) {
            _ = try TCPListener(loop: loop, host: "not-an-address", port: 0) { _ in }
        }
        loop.close()
    }
}

extension ConnectTests {
    @Test func closingTheLoopCancelsAPendingConnect() throws {
        let unanswering = try UnansweringListener()
        defer { unanswering.close() }
        let port = unanswering.port

        let loop = try EventLoop()
        var completions = 0
        let attempt = TCPConnector.connect(loop: loop, host: "127.0.0.1", port: port, timeout: 60_000_000) { _ in
            completions += 1
        }
        loop.schedule(after: 50_000) { loop.stop() }
        runBounded(loop)  // closes the loop: must not wait for the kernel's SYN retries
        #expect(attempt.isFinished)
        #expect(completions == 0, "a cancelled attempt never completes")
    }
}

/// A listener whose accept queue is full, so the kernel drops new SYNs and a connect to it
/// neither succeeds nor fails until the kernel's retries run out (about two minutes).
struct UnansweringListener {
    let fd: Int32
    let port: Int
    let filler: PosixPeer

    init() throws {
        fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_addr.s_addr = UInt32(0x7f00_0001).bigEndian
        var length = socklen_t(MemoryLayout<sockaddr_in>.size)
        let fd = fd
        withUnsafeMutablePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) {
                _ = bind(fd, $0, length)
                _ = listen(fd, 0)
                _ = getsockname(fd, $0, &length)
            }
        }
        port = Int(UInt16(bigEndian: address.sin_port))
        // With backlog 0 one unaccepted connection fills the queue (a second blocking
        // connect would itself hang for the kernel's SYN retries).
        filler = try #require(PosixPeer.connect(port: port))
    }

    func close() {
        filler.close()
        Glibc.close(fd)
    }
}
