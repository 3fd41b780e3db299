import CUV  // sys/socket.h types (SOCK_STREAM) come through uv.h
import Glibc
import Testing
@testable import Transport

@Suite(.serialized)
struct EchoTests {
    /// Listens on `host`, connects to it, sends a message, reads it back from an echo server.
    func echo(listenHost: String, connectHost: String) throws -> (client: String, server: String) {
        let loop = try EventLoop()
        var serverSide: [TCPConnection] = []
        let listener = try TCPListener(loop: loop, host: listenHost, port: 0) { connection in
            serverSide.append(connection)
            connection.onRead = { bytes in connection.write(bytes) }
            connection.onEnd = { _ in connection.close() }
        }
        #expect(listener.port > 0)
        let message = Array("hello, loop".utf8) + (0..<100_000).map { UInt8($0 % 251) }
        let sink = ByteSink()
        var addresses = ("", "")
        var failure: TransportError?
        TCPConnector.connect(loop: loop, host: connectHost, port: listener.port, timeout: 5_000_000) { result in
            switch result {
            case .failure(let error):
                failure = error
                loop.stop()
            case .success(let connection):
                addresses = (connection.localAddress, connection.remoteAddress)
                connection.onRead = { bytes in
                    sink.bytes += bytes
                    if sink.bytes.count == message.count { connection.close(); loop.stop() }
                }
                connection.write(message)
            }
        }
        runBounded(loop)
        #expect(failure == nil)
        #expect(sink.bytes == message)
        #expect(serverSide.count == 1)
        return addresses
    }

    @Test func echoOverIPv4() throws {
        let (local, remote) = try echo(listenHost: "127.0.0.1", connectHost: "127.0.0.1")
        #expect(local.hasPrefix("127.0.0.1:"))
        #expect(remote.hasPrefix("127.0.0.1:"))
    }

    @Test(.enabled(if: Loopback.hasIPv6, "this machine has no ::1 (IPv6 loopback)"))
    func echoOverIPv6() throws {
        let (local, remote) = try echo(listenHost: "::1", connectHost: "::1")
        #expect(local.hasPrefix("[::1]:"))
        #expect(remote.hasPrefix("[::1]:"))
    }

    @Test func connectToLocalhostResolvesTheName() throws {
        // "localhost" goes through uv_getaddrinfo; listen on 127.0.0.1 and, if present, ::1
        // is not needed: the connector tries every address until one answers.
        let (_, remote) = try echo(listenHost: "127.0.0.1", connectHost: "localhost")
        #expect(remote.hasPrefix("127.0.0.1:"))
    }
}

enum Loopback {
    /// Whether a socket can bind ::1 here (containers often run without IPv6).
    static let hasIPv6: Bool = {
        let fd = socket(AF_INET6, Int32(SOCK_STREAM.rawValue), 0)
        guard fd >= 0 else { return false }
        defer { Glibc.close(fd) }
        var address = sockaddr_in6()
        address.sin6_family = sa_family_t(AF_INET6)
        address.sin6_addr = in6addr_loopback
        return withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) {
                bind(fd, $0, socklen_t(MemoryLayout<sockaddr_in6>.size)) == 0
            }
        }
    }()
}
