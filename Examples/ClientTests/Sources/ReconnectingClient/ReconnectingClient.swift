import Glibc

/// The client under test: a minimal WebSocket client that stays connected until the server
/// ends the connection, then reconnects. Its bug is on purpose: it always waits the same
/// `retryDelay` (no exponential backoff, no jitter), so a fleet of such clients would hit
/// a recovering server in lockstep. Blocking sockets, one connection at a time.
public struct ReconnectingClient: Sendable {
    public let host: String
    public let port: Int
    public let path: String
    public let retryDelay: Double

    /// `url` is `ws://HOST:PORT/PATH`.
    public init?(url: String, retryDelay: Double) {
        guard url.hasPrefix("ws://") else { return nil }
        let rest = url.dropFirst(5)
        let slash = rest.firstIndex(of: "/") ?? rest.endIndex
        let authority = rest[..<slash]
        guard let colon = authority.lastIndex(of: ":"), let port = Int(authority[authority.index(after: colon)...]) else { return nil }
        host = String(authority[..<colon])
        self.port = port
        path = slash == rest.endIndex ? "/" : String(rest[slash...])
        self.retryDelay = retryDelay
    }

    /// Connects `connections` times, each time until the server closes; returns how many
    /// connections were upgraded.
    public func run(connections: Int) -> Int {
        var upgraded = 0
        for attempt in 0..<connections {
            if attempt > 0 { usleep(useconds_t(retryDelay * 1_000_000)) }
            if connectOnce() { upgraded += 1 }
        }
        return upgraded
    }

    /// One connection: the upgrade, then frames until a close frame or the end of the
    /// stream; a close is answered with a close, as RFC 6455 asks.
    private func connectOnce() -> Bool {
        let fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        guard fd >= 0 else { return false }
        defer { close(fd) }
        var timeout = timeval(tv_sec: 10, tv_usec: 0)
        setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &timeout, socklen_t(MemoryLayout<timeval>.size))
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_addr.s_addr = inet_addr(host)
        address.sin_port = UInt16(port).bigEndian
        let connected = withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { connect(fd, $0, socklen_t(MemoryLayout<sockaddr_in>.size)) }
        }
        guard connected == 0 else { return false }
        send(fd, "GET \(path) HTTP/1.1\r\nHost: \(host):\(port)\r\nUpgrade: websocket\r\nConnection: Upgrade\r\n"
            + "Sec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==\r\nSec-WebSocket-Version: 13\r\nUser-Agent: reconnecting-client/1\r\n\r\n")
        var received: [UInt8] = []
        guard let headEnd = readUntilHead(fd, into: &received),
              String(decoding: received[..<headEnd], as: UTF8.self).hasPrefix("HTTP/1.1 101") else { return false }
        received.removeFirst(headEnd)
        while true {
            // Server frames are unmasked; a payload under 126 bytes has a 2-byte header.
            if received.count >= 2 {
                let opcode = received[0] & 0x0F
                let length = Int(received[1] & 0x7F)
                let header = length == 126 ? 4 : length == 127 ? 10 : 2
                if received.count >= header {
                    var size = length
                    if length == 126 { size = Int(received[2]) << 8 | Int(received[3]) }
                    if length == 127 { size = (2..<10).reduce(0) { $0 << 8 | Int(received[$1]) } }
                    if received.count >= header + size {
                        if opcode == 0x8 {
                            sendFrame(fd, opcode: 0x8, Array(received[header..<header + min(size, 2)]))
                            return true
                        }
                        received.removeFirst(header + size)
                        continue
                    }
                }
            }
            var chunk = [UInt8](repeating: 0, count: 4096)
            let n = recv(fd, &chunk, chunk.count, 0)
            if n <= 0 { return true }
            received += chunk[..<n]
        }
    }

    private func readUntilHead(_ fd: Int32, into received: inout [UInt8]) -> Int? {
        var chunk = [UInt8](repeating: 0, count: 4096)
        while true {
            if let end = (0..<max(0, received.count - 3)).first(where: { received[$0..<$0 + 4] == [13, 10, 13, 10] }) {
                return end + 4
            }
            let n = recv(fd, &chunk, chunk.count, 0)
            if n <= 0 { return nil }
            received += chunk[..<n]
        }
    }

    private func send(_ fd: Int32, _ text: String) {
        let bytes = Array(text.utf8)
        _ = Glibc.send(fd, bytes, bytes.count, Int32(MSG_NOSIGNAL))
    }

    /// A masked frame (client frames are masked, RFC 6455 5.3); payloads under 126 bytes.
    private func sendFrame(_ fd: Int32, opcode: UInt8, _ payload: [UInt8]) {
        let mask: [UInt8] = [0x5A, 0x17, 0xC3, 0x08]
        let bytes = [0x80 | opcode, 0x80 | UInt8(payload.count)] + mask
            + payload.enumerated().map { $0.element ^ mask[$0.offset % 4] }
        _ = Glibc.send(fd, bytes, bytes.count, Int32(MSG_NOSIGNAL))
    }
}
