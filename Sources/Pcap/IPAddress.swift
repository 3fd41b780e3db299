import Glibc
import Vocabulary

/// An IPv4 or IPv6 address as two integers, so flow keys hash without allocating.
/// IPv4 lives in the low 32 bits of `low` with `high` zero and `isIPv6` false.
public struct IPAddress: Hashable, Sendable, Comparable, CustomStringConvertible {
    public var high: UInt64
    public var low: UInt64
    public var isIPv6: Bool

    public init(ipv4 value: UInt32) {
        high = 0
        low = UInt64(value)
        isIPv6 = false
    }

    public init(ipv6High high: UInt64, low: UInt64) {
        self.high = high
        self.low = low
        isIPv6 = true
    }

    /// Reads 4 or 16 network-order bytes at `offset`.
    init(_ bytes: UnsafeRawBufferPointer, offset: Int, v6: Bool) {
        if v6 {
            self.init(ipv6High: bytes.readBE64(offset), low: bytes.readBE64(offset + 8))
        } else {
            self.init(ipv4: bytes.readBE32(offset))
        }
    }

    /// Parses "127.0.0.1" or "::1" (no brackets).
    public init?(_ text: String) {
        if text.contains(":") {
            var raw = in6_addr()
            guard inet_pton(AF_INET6, text, &raw) == 1 else { return nil }
            let bytes = withUnsafeBytes(of: &raw) { Array($0) }
            let value = bytes.withUnsafeBytes { IPAddress($0, offset: 0, v6: true) }
            self = value
        } else {
            var raw = in_addr()
            guard inet_pton(AF_INET, text, &raw) == 1 else { return nil }
            self.init(ipv4: UInt32(bigEndian: raw.s_addr))
        }
    }

    /// Network-order bytes: 4 for IPv4, 16 for IPv6.
    public var bytes: [UInt8] {
        if isIPv6 {
            return (0..<8).map { UInt8(truncatingIfNeeded: high >> (56 - 8 * $0)) }
                + (0..<8).map { UInt8(truncatingIfNeeded: low >> (56 - 8 * $0)) }
        }
        return (0..<4).map { UInt8(truncatingIfNeeded: low >> (24 - 8 * $0)) }
    }

    public var description: String {
        var out = [CChar](repeating: 0, count: 64)
        let raw = bytes
        _ = raw.withUnsafeBytes { inet_ntop(isIPv6 ? AF_INET6 : AF_INET, $0.baseAddress, &out, 64) }
        return string(fromCBuffer: out)
    }

    public static func < (a: IPAddress, b: IPAddress) -> Bool {
        (a.isIPv6 ? 1 : 0, a.high, a.low) < (b.isIPv6 ? 1 : 0, b.high, b.low)
    }
}

/// An address and TCP port.
public struct Endpoint: Hashable, Sendable, Comparable, CustomStringConvertible {
    public var address: IPAddress
    public var port: UInt16

    public init(_ address: IPAddress, _ port: UInt16) {
        self.address = address
        self.port = port
    }

    /// "127.0.0.1:50123" or "[::1]:50123", as capture records write addresses.
    ///
    /// IPv4 is written digit by digit: every decoded connection names both of its ends,
    /// and `inet_ntop` with string interpolation cost 4,000 instructions an endpoint.
    public var description: String {
        if address.isIPv6 { return "[\(address)]:\(port)" }
        return String(unsafeUninitializedCapacity: 21) { text in
            var count = 0
            func put(_ value: UInt64) {
                if value >= 10 { put(value / 10) }
                text[count] = UInt8(ascii: "0") &+ UInt8(truncatingIfNeeded: value % 10)
                count += 1
            }
            for shift in stride(from: 24, through: 0, by: -8) {
                put((address.low >> UInt64(shift)) & 0xFF)
                text[count] = shift == 0 ? UInt8(ascii: ":") : UInt8(ascii: ".")
                count += 1
            }
            put(UInt64(port))
            return count
        }
    }

    /// Parses the capture records' address form back.
    public init?(parsing text: String) {
        guard case .success(let parsed) = HostPort.parse(text), let address = IPAddress(parsed.host) else { return nil }
        self.init(address, UInt16(parsed.port))
    }

    public static func < (a: Endpoint, b: Endpoint) -> Bool { (a.address, a.port) < (b.address, b.port) }
}

/// Both ends of a TCP connection, in a canonical order so both directions share one key.
public struct FlowKey: Hashable, Sendable {
    public var low: Endpoint
    public var high: Endpoint

    public init(_ a: Endpoint, _ b: Endpoint) {
        if a < b { low = a; high = b } else { low = b; high = a }
    }

    public static func == (lhs: FlowKey, rhs: FlowKey) -> Bool { lhs.low == rhs.low && lhs.high == rhs.high }

    /// One pre-mixed word instead of every field: the flow table is looked up once per
    /// packet, and hashing the ten fields one by one cost more than the lookup itself.
    /// Equality still compares every field, so collisions cost only speed.
    public func hash(into hasher: inout Hasher) {
        var word = low.address.high &* 0x9E37_79B9_7F4A_7C15 ^ low.address.low
        word = (word &* 0x9E37_79B9_7F4A_7C15) ^ high.address.high
        word = (word &* 0x9E37_79B9_7F4A_7C15) ^ high.address.low
        word = (word &* 0x9E37_79B9_7F4A_7C15) ^ (UInt64(low.port) << 16 | UInt64(high.port))
        hasher.combine(word)
    }
}

extension UnsafeRawBufferPointer {
    @inline(__always) func readBE16(_ offset: Int) -> UInt16 {
        UInt16(self[offset]) << 8 | UInt16(self[offset + 1])
    }
    @inline(__always) func readBE32(_ offset: Int) -> UInt32 {
        UInt32(self[offset]) << 24 | UInt32(self[offset + 1]) << 16 | UInt32(self[offset + 2]) << 8 | UInt32(self[offset + 3])
    }
    @inline(__always) func readBE64(_ offset: Int) -> UInt64 {
        UInt64(readBE32(offset)) << 32 | UInt64(readBE32(offset + 4))
    }
}
