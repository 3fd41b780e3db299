import Glibc

/// A blocking client socket for requests no real client would send (slowloris, idle,
/// malformed heads), and for in-process tests of the proxy library. Every read is bounded
/// by the receive timeout given at connect.
public final class RawSocket {
    public let fd: Int32

    /// Could not connect: the message says where and why.
    public struct ConnectError: Error, CustomStringConvertible {
        public var description: String
    }

    public init(port: Int, receiveTimeout seconds: Int = 30) throws {
        fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        var timeout = timeval(tv_sec: seconds, tv_usec: 0)
        setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &timeout, socklen_t(MemoryLayout<timeval>.size))
        var peer = sockaddr_in()
        peer.sin_family = sa_family_t(AF_INET)
        peer.sin_addr.s_addr = inet_addr("127.0.0.1")
        peer.sin_port = UInt16(port).bigEndian
        let connected = withUnsafePointer(to: &peer) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { connect(fd, $0, socklen_t(MemoryLayout<sockaddr_in>.size)) }
        }
        guard connected == 0 else {
            let reason = String(cString: strerror(errno))
            close(fd)
            throw ConnectError(description: "cannot connect to 127.0.0.1:\(port): \(reason)")
        }
    }

    deinit { close(fd) }

    /// False once the peer has closed or reset (the write failed).
    @discardableResult
    public func send(_ bytes: [UInt8]) -> Bool {
        bytes.withUnsafeBytes { Glibc.send(fd, $0.baseAddress, $0.count, Int32(MSG_NOSIGNAL)) } == bytes.count
    }

    /// Sends FIN: the peer reads the end of the stream; this side can still read.
    public func shutdownWrite() { shutdown(fd, Int32(SHUT_WR)) }

    /// Whether something (data or EOF) can be read within `milliseconds`.
    public func readable(within milliseconds: Int32) -> Bool {
        var entry = pollfd(fd: fd, events: Int16(POLLIN), revents: 0)
        return poll(&entry, 1, milliseconds) > 0
    }

    /// Everything until EOF, a reset or the receive timeout; `ended` tells whether EOF or a reset came.
    public func readToEnd() -> (bytes: [UInt8], ended: Bool) {
        var received: [UInt8] = []
        var chunk = [UInt8](repeating: 0, count: 4096)
        while true {
            let n = chunk.withUnsafeMutableBytes { recv(fd, $0.baseAddress, $0.count, 0) }
            if n > 0 {
                received += chunk[..<n]
                continue
            }
            let ended = n == 0 || errno == ECONNRESET
            return (received, ended)
        }
    }

    public var text: String { String(decoding: readToEnd().bytes, as: UTF8.self) }

    /// The first line the peer sends (without its CRLF), or what came before EOF or the timeout.
    public func firstLine() -> String {
        var bytes: [UInt8] = []
        var byte: UInt8 = 0
        while recv(fd, &byte, 1, 0) == 1 {
            if byte == 10 { break }
            if byte != 13 { bytes.append(byte) }
        }
        return String(decoding: bytes, as: UTF8.self)
    }

    /// Bytes up to and including the first blank line (an HTTP head), or what came before
    /// EOF or the timeout.
    public func readHead() -> [UInt8] {
        var bytes: [UInt8] = []
        var byte: UInt8 = 0
        while !bytes.ends(with: [13, 10, 13, 10]), recv(fd, &byte, 1, 0) == 1 { bytes.append(byte) }
        return bytes
    }

    /// Up to `count` bytes in one read (fewer when fewer have arrived); empty at EOF or timeout.
    public func readSome(_ count: Int = 4096) -> [UInt8] {
        var chunk = [UInt8](repeating: 0, count: count)
        let n = chunk.withUnsafeMutableBytes { recv(fd, $0.baseAddress, $0.count, 0) }
        return n > 0 ? Array(chunk[..<n]) : []
    }
}

extension Array where Element == UInt8 {
    fileprivate func ends(with suffix: [UInt8]) -> Bool { count >= suffix.count && Array(self[(count - suffix.count)...]) == suffix }
}
