import Glibc

struct SocketError: Error, CustomStringConvertible {
    var description: String
    init(_ what: String) { description = "\(what): \(String(cString: strerror(errno)))" }
    init(message: String) { description = message }
}

/// A blocking IPv4 loopback TCP socket for interop tests. Every wait goes through poll with
/// a timeout, so a silent peer fails the test instead of hanging it.
final class TestSocket {
    let fd: Int32
    private init(fd: Int32) { self.fd = fd }
    deinit { close() }

    private var closed = false
    func close() {
        if !closed { Glibc.close(fd) }
        closed = true
    }

    private static func loopback(port: UInt16) -> sockaddr_in {
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_port = port.bigEndian
        address.sin_addr.s_addr = UInt32(0x7F00_0001).bigEndian
        return address
    }

    static func connect(port: UInt16) throws -> TestSocket {
        let fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        guard fd >= 0 else { throw SocketError("socket") }
        let sock = TestSocket(fd: fd)
        var address = loopback(port: port)
        let status = withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { Glibc.connect(fd, $0, socklen_t(MemoryLayout<sockaddr_in>.size)) }
        }
        guard status == 0 else { throw SocketError("connect to 127.0.0.1:\(port)") }
        return sock
    }

    /// A listening socket on 127.0.0.1 and the port the kernel picked.
    static func listen() throws -> (TestSocket, UInt16) {
        let fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        guard fd >= 0 else { throw SocketError("socket") }
        let sock = TestSocket(fd: fd)
        var address = loopback(port: 0)
        let bound = withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { bind(fd, $0, socklen_t(MemoryLayout<sockaddr_in>.size)) }
        }
        guard bound == 0, Glibc.listen(fd, 4) == 0 else { throw SocketError("bind/listen") }
        var length = socklen_t(MemoryLayout<sockaddr_in>.size)
        guard withUnsafeMutablePointer(to: &address, {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { getsockname(fd, $0, &length) }
        }) == 0 else { throw SocketError("getsockname") }
        return (sock, UInt16(bigEndian: address.sin_port))
    }

    private func wait(for events: Int16, timeout: Double, doing what: String) throws {
        var descriptor = pollfd(fd: fd, events: events, revents: 0)
        let ready = poll(&descriptor, 1, Int32(timeout * 1000))
        guard ready > 0 else {
            throw ready == 0 ? SocketError(message: "\(what): timed out after \(timeout) s") : SocketError(what)
        }
    }

    func accept(timeout: Double = 10) throws -> TestSocket {
        try wait(for: Int16(POLLIN), timeout: timeout, doing: "accept")
        let client = Glibc.accept(fd, nil, nil)
        guard client >= 0 else { throw SocketError("accept") }
        return TestSocket(fd: client)
    }

    func send(_ bytes: [UInt8]) throws {
        var sent = 0
        while sent < bytes.count {
            try wait(for: Int16(POLLOUT), timeout: 10, doing: "send")
            let n = bytes[sent...].withUnsafeBytes { Glibc.send(fd, $0.baseAddress, $0.count, Int32(MSG_NOSIGNAL)) }
            guard n > 0 else { throw SocketError("send") }
            sent += n
        }
    }

    /// Up to 64 KiB; empty at end of stream.
    func receive(timeout: Double = 10) throws -> [UInt8] {
        try wait(for: Int16(POLLIN), timeout: timeout, doing: "receive")
        var buffer = [UInt8](repeating: 0, count: 64 * 1024)
        let n = buffer.withUnsafeMutableBytes { recv(fd, $0.baseAddress, $0.count, 0) }
        guard n >= 0 else { throw SocketError("recv") }
        return Array(buffer[0..<n])
    }
}
