/// Builds IPv4/IPv6 TCP packets with correct lengths and checksums: for `faultline export`
/// (synthetic TCP that Wireshark opens) and for tests that need packets made in code.
public enum PacketBuilder {
    /// An IP packet (no link header) carrying one TCP segment.
    public static func tcp(from source: Endpoint, to destination: Endpoint, seq: UInt32, ack: UInt32,
                           flags: TCPSegment.Flags, window: UInt16 = 65535, payload: [UInt8] = []) -> [UInt8] {
        var tcp = [UInt8](repeating: 0, count: 20)
        put16(&tcp, 0, source.port)
        put16(&tcp, 2, destination.port)
        put32(&tcp, 4, seq)
        put32(&tcp, 8, ack)
        tcp[12] = 5 << 4
        tcp[13] = flags.rawValue
        put16(&tcp, 14, window)
        tcp.append(contentsOf: payload)
        let src = source.address.bytes, dst = destination.address.bytes
        // Pseudo-header checksum (RFC 793 / RFC 8200 8.1).
        var pseudo = src + dst
        if source.address.isIPv6 {
            pseudo += [UInt8(truncatingIfNeeded: tcp.count >> 24), UInt8(truncatingIfNeeded: tcp.count >> 16),
                       UInt8(truncatingIfNeeded: tcp.count >> 8), UInt8(truncatingIfNeeded: tcp.count), 0, 0, 0, 6]
        } else {
            pseudo += [0, 6, UInt8(truncatingIfNeeded: tcp.count >> 8), UInt8(truncatingIfNeeded: tcp.count)]
        }
        put16(&tcp, 16, checksum(pseudo, tcp))
        if source.address.isIPv6 {
            var ip = [UInt8](repeating: 0, count: 40)
            ip[0] = 0x60
            put16(&ip, 4, UInt16(tcp.count))
            ip[6] = 6
            ip[7] = 64
            ip.replaceSubrange(8..<24, with: src)
            ip.replaceSubrange(24..<40, with: dst)
            return ip + tcp
        }
        var ip = [UInt8](repeating: 0, count: 20)
        ip[0] = 0x45
        put16(&ip, 2, UInt16(20 + tcp.count))
        ip[6] = 0x40  // don't fragment
        ip[8] = 64
        ip[9] = 6
        ip.replaceSubrange(12..<16, with: src)
        ip.replaceSubrange(16..<20, with: dst)
        put16(&ip, 10, checksum(ip, []))
        return ip + tcp
    }

    /// The Internet checksum (RFC 1071) over two byte runs, as if joined.
    static func checksum(_ a: [UInt8], _ b: [UInt8]) -> UInt16 {
        var sum: UInt32 = 0
        func add(_ bytes: [UInt8], odd: inout UInt8?) {
            for byte in bytes {
                if let high = odd {
                    sum &+= UInt32(high) << 8 | UInt32(byte)
                    odd = nil
                } else {
                    odd = byte
                }
            }
        }
        var odd: UInt8?
        add(a, odd: &odd)
        add(b, odd: &odd)
        if let high = odd { sum &+= UInt32(high) << 8 }
        while sum >> 16 != 0 { sum = (sum & 0xFFFF) + (sum >> 16) }
        return ~UInt16(sum)
    }

    static func put16(_ buffer: inout [UInt8], _ offset: Int, _ value: UInt16) {
        buffer[offset] = UInt8(value >> 8)
        buffer[offset + 1] = UInt8(value & 0xFF)
    }

    static func put32(_ buffer: inout [UInt8], _ offset: Int, _ value: UInt32) {
        put16(&buffer, offset, UInt16(value >> 16))
        put16(&buffer, offset + 2, UInt16(value & 0xFFFF))
    }
}
