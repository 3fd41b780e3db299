import CUV  // sys/socket.h types (SOCK_STREAM) come through uv.h
import Foundation
import Glibc
import Synchronization

/// A plain blocking POSIX socket for the far end of a test, run on its own thread, so the
/// transport is checked against the kernel's behaviour rather than against itself.
/// Every receive is bounded by SO_RCVTIMEO.
struct PosixPeer {
    let fd: Int32

    /// Connects to 127.0.0.1:`port` (blocking; loopback connects complete at once even
    /// before the listener's loop accepts).
    static func connect(port: Int, receiveTimeoutSeconds: Int = 5) -> PosixPeer? {
        let fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        guard fd >= 0 else { return nil }
        var timeout = timeval(tv_sec: receiveTimeoutSeconds, tv_usec: 0)
        setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &timeout, socklen_t(MemoryLayout<timeval>.size))
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_port = UInt16(port).bigEndian
        address.sin_addr.s_addr = UInt32(0x7f00_0001).bigEndian
        let status = withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) {
                Glibc.connect(fd, $0, socklen_t(MemoryLayout<sockaddr_in>.size))
            }
        }
        guard status == 0 else { Glibc.close(fd); return nil }
        return PosixPeer(fd: fd)
    }

    func send(_ bytes: [UInt8]) -> Bool {
        var sent = 0
        while sent < bytes.count {
            let n = bytes[sent...].withUnsafeBytes { Glibc.send(fd, $0.baseAddress, $0.count, Int32(MSG_NOSIGNAL)) }
            if n <= 0 { return false }
            sent += n
        }
        return true
    }

    enum Received: Equatable {
        case bytes([UInt8])
        case eof
        case failed(errno: Int32)
    }

    func receive() -> Received {
        var buffer = [UInt8](repeating: 0, count: 65536)
        let n = buffer.withUnsafeMutableBytes { recv(fd, $0.baseAddress, $0.count, 0) }
        if n > 0 { return .bytes(Array(buffer[..<n])) }
        if n == 0 { return .eof }
        return .failed(errno: errno)
    }

    /// Reads until `count` bytes have arrived, EOF or an error; returns what came.
    func receive(count: Int) -> [UInt8] {
        var got: [UInt8] = []
        while got.count < count, case .bytes(let bytes) = receive() { got += bytes }
        return got
    }

    /// Close with SO_LINGER 0: the kernel sends RST instead of FIN.
    func abort() {
        var option = linger(l_onoff: 1, l_linger: 0)
        setsockopt(fd, SOL_SOCKET, SO_LINGER, &option, socklen_t(MemoryLayout<linger>.size))
        Glibc.close(fd)
    }

    func close() { Glibc.close(fd) }
}

/// Runs `body` on a new thread (not the Swift concurrency pool, which the blocking loop
/// already occupies).
func onThread(_ body: @escaping @Sendable () -> Void) {
    let thread = Thread(block: body)
    thread.start()
}

/// A value written on one thread and read on another.
final class Shared<Value: Sendable>: Sendable {
    private let value: Mutex<Value>
    init(_ initial: Value) { value = Mutex(initial) }
    func set(_ newValue: Value) { value.withLock { $0 = newValue } }
    func update(_ body: (inout Value) -> Void) { value.withLock { body(&$0) } }
    var get: Value { value.withLock { $0 } }
}

/// Polls `condition` every 10 ms for at most `seconds` (for threads without a loop).
func waitUntil(seconds: Double = 10, _ condition: () -> Bool) {
    var waited = 0.0
    while !condition() && waited < seconds {
        usleep(10_000)
        waited += 0.01
    }
}
