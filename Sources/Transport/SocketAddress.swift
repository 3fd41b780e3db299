import CUV
import Glibc

/// Conversions between text addresses and `sockaddr`s. Text form everywhere in Faultline:
/// `"127.0.0.1:8080"` and `"[::1]:8080"`.
enum SocketAddress {
    /// Parses a numeric IPv4 or IPv6 address (brackets allowed around IPv6; "localhost"
    /// means 127.0.0.1) into `storage`. Returns false for a host name.
    static func parseNumeric(host: String, port: Int, into storage: inout sockaddr_storage) -> Bool {
        var host = host
        if host.hasPrefix("["), host.hasSuffix("]") { host = String(host.dropFirst().dropLast()) }
        if host == "localhost" { host = "127.0.0.1" }
        return withUnsafeMutableBytes(of: &storage) { raw in
            let base = raw.baseAddress!
            if uv_ip4_addr(host, Int32(port), base.assumingMemoryBound(to: sockaddr_in.self)) == 0 { return true }
            if uv_ip6_addr(host, Int32(port), base.assumingMemoryBound(to: sockaddr_in6.self)) == 0 { return true }
            return false
        }
    }

    /// `"a.b.c.d:port"` or `"[v6]:port"` for a sockaddr; nil for other families.
    static func format(_ address: UnsafePointer<sockaddr>) -> String? {
        var name = [CChar](repeating: 0, count: 64)
        switch Int32(address.pointee.sa_family) {
        case AF_INET:
            return address.withMemoryRebound(to: sockaddr_in.self, capacity: 1) { v4 in
                uv_ip4_name(v4, &name, name.count)
                return "\(text(name)):\(UInt16(bigEndian: v4.pointee.sin_port))"
            }
        case AF_INET6:
            return address.withMemoryRebound(to: sockaddr_in6.self, capacity: 1) { v6 in
                uv_ip6_name(v6, &name, name.count)
                return "[\(text(name))]:\(UInt16(bigEndian: v6.pointee.sin6_port))"
            }
        default:
            return nil
        }
    }

    /// A NUL-terminated C string buffer as a Swift string.
    private static func text(_ buffer: [CChar]) -> String {
        let bytes = buffer.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }
        return String(decoding: bytes, as: UTF8.self)
    }

    /// The port of a sockaddr (host order), 0 for other families.
    static func port(_ address: UnsafePointer<sockaddr>) -> Int {
        switch Int32(address.pointee.sa_family) {
        case AF_INET:
            return address.withMemoryRebound(to: sockaddr_in.self, capacity: 1) { Int(UInt16(bigEndian: $0.pointee.sin_port)) }
        case AF_INET6:
            return address.withMemoryRebound(to: sockaddr_in6.self, capacity: 1) { Int(UInt16(bigEndian: $0.pointee.sin6_port)) }
        default:
            return 0
        }
    }

    /// The local or peer address of a TCP handle, formatted; nil if the socket has none.
    static func of(_ tcp: UnsafeMutablePointer<uv_tcp_t>, peer: Bool) -> String? {
        var storage = sockaddr_storage()
        var length = Int32(MemoryLayout<sockaddr_storage>.size)
        return withUnsafeMutablePointer(to: &storage) { pointer in
            pointer.withMemoryRebound(to: sockaddr.self, capacity: 1) { address in
                let status = peer ? uv_tcp_getpeername(tcp, address, &length) : uv_tcp_getsockname(tcp, address, &length)
                return status == 0 ? format(address) : nil
            }
        }
    }

    /// `host:port` for messages, with brackets around an IPv6 literal.
    static func display(host: String, port: Int) -> String {
        host.contains(":") && !host.hasPrefix("[") ? "[\(host)]:\(port)" : "\(host):\(port)"
    }
}
