/// One TCP segment as seen in a packet, pointing into libpcap's buffer (valid only until
/// the next packet is read): nothing is copied to look at a packet.
public struct TCPSegment {
    public struct Flags: OptionSet, Sendable {
        public let rawValue: UInt8
        public init(rawValue: UInt8) { self.rawValue = rawValue }
        public static let fin = Flags(rawValue: 0x01)
        public static let syn = Flags(rawValue: 0x02)
        public static let rst = Flags(rawValue: 0x04)
        public static let psh = Flags(rawValue: 0x08)
        public static let ack = Flags(rawValue: 0x10)
    }

    public var source: Endpoint
    public var destination: Endpoint
    public var seq: UInt32
    public var ack: UInt32
    public var flags: Flags
    /// The captured payload bytes.
    public var payload: UnsafeRawBufferPointer
    /// Payload bytes the IP header promised but the snapshot length cut off.
    public var missing: Int

    public init(source: Endpoint, destination: Endpoint, seq: UInt32, ack: UInt32, flags: Flags,
                payload: UnsafeRawBufferPointer, missing: Int = 0) {
        self.source = source
        self.destination = destination
        self.seq = seq
        self.ack = ack
        self.flags = flags
        self.payload = payload
        self.missing = missing
    }
}

/// What decoding one packet's headers gave.
public enum PacketVerdict {
    case tcp(TCPSegment)
    /// Not TCP over IP (ARP, UDP, ICMP...): silently skipped.
    case notTCP
    /// An IPv4 fragment or IPv6 fragment: skipped with a warning (no IP reassembly).
    case fragment
    /// Headers shorter than they claim or cut by the snapshot length.
    case malformed(String)
}

/// Link, IP and TCP header decoding, pure over a packet's bytes.
public enum PacketDecoder {
    /// `wireLength` is the packet's original length (pcap's `len`), to tell truncation from
    /// a short packet.
    public static func decode(_ packet: UnsafeRawBufferPointer, link: LinkType) -> PacketVerdict {
        guard let (offset, proto) = link.networkLayer(of: packet) else { return .malformed("link header cut short") }
        switch proto {
        case .ipv4: return ipv4(packet, at: offset)
        case .ipv6: return ipv6(packet, at: offset)
        case .other: return .notTCP
        }
    }

    static func ipv4(_ p: UnsafeRawBufferPointer, at o: Int) -> PacketVerdict {
        guard p.count >= o + 20 else { return .malformed("IPv4 header cut short") }
        guard p[o] >> 4 == 4 else { return .malformed("IPv4 version nibble is \(p[o] >> 4)") }
        let headerLength = Int(p[o] & 0x0F) * 4
        guard headerLength >= 20, p.count >= o + headerLength else { return .malformed("IPv4 header length \(headerLength)") }
        let totalLength = Int(p.readBE16(o + 2))
        let fragment = p.readBE16(o + 6)
        if fragment & 0x3FFF != 0 { return .fragment }  // MF set or a non-zero offset
        guard p[o + 9] == 6 else { return .notTCP }
        // Total length 0 happens with TSO on the capturing host: trust the captured bytes.
        let ipEnd = totalLength == 0 ? Int.max : o + totalLength
        guard ipEnd >= o + headerLength else { return .malformed("IPv4 total length \(totalLength)") }
        let src = IPAddress(ipv4: p.readBE32(o + 12)), dst = IPAddress(ipv4: p.readBE32(o + 16))
        return tcp(p, at: o + headerLength, ipEnd: ipEnd, src: src, dst: dst)
    }

    static func ipv6(_ p: UnsafeRawBufferPointer, at o: Int) -> PacketVerdict {
        guard p.count >= o + 40 else { return .malformed("IPv6 header cut short") }
        guard p[o] >> 4 == 6 else { return .malformed("IPv6 version nibble is \(p[o] >> 4)") }
        let payloadLength = Int(p.readBE16(o + 4))
        var next = p[o + 6]
        let src = IPAddress(p, offset: o + 8, v6: true), dst = IPAddress(p, offset: o + 24, v6: true)
        var offset = o + 40
        let ipEnd = payloadLength == 0 ? Int.max : o + 40 + payloadLength  // 0: jumbogram or TSO
        // Skip extension headers until TCP (RFC 8200 4.1).
        while true {
            switch next {
            case 6:
                return tcp(p, at: offset, ipEnd: ipEnd, src: src, dst: dst)
            case 0, 43, 60, 135, 139, 140:  // hop-by-hop, routing, destination, mobility, HIP, shim6
                guard p.count >= offset + 2 else { return .malformed("IPv6 extension header cut short") }
                next = p[offset]
                offset += (Int(p[offset + 1]) + 1) * 8
            case 51:  // authentication header: length in 4-byte units minus 2
                guard p.count >= offset + 2 else { return .malformed("IPv6 AH cut short") }
                next = p[offset]
                offset += (Int(p[offset + 1]) + 2) * 4
            case 44:
                guard p.count >= offset + 8 else { return .malformed("IPv6 fragment header cut short") }
                let fragment = p.readBE16(offset + 2)
                // An "atomic" fragment (offset 0, no more fragments) holds the whole packet.
                if fragment & 0xFFF9 != 0 { return .fragment }
                next = p[offset]
                offset += 8
            default:
                return .notTCP
            }
        }
    }

    static func tcp(_ p: UnsafeRawBufferPointer, at o: Int, ipEnd: Int, src: IPAddress, dst: IPAddress) -> PacketVerdict {
        guard p.count >= o + 20 else { return .malformed("TCP header cut short") }
        let dataOffset = Int(p[o + 12] >> 4) * 4
        guard dataOffset >= 20 else { return .malformed("TCP data offset \(dataOffset)") }
        guard p.count >= o + dataOffset else { return .malformed("TCP options cut short") }
        let payloadStart = o + dataOffset
        let end = min(ipEnd, p.count)  // IP length trims Ethernet padding
        let captured = max(0, end - payloadStart)
        let missing = ipEnd == Int.max ? 0 : max(0, ipEnd - max(p.count, payloadStart))
        let payload = UnsafeRawBufferPointer(rebasing: p[payloadStart ..< payloadStart + captured])
        return .tcp(TCPSegment(
            source: Endpoint(src, p.readBE16(o)), destination: Endpoint(dst, p.readBE16(o + 2)),
            seq: p.readBE32(o + 4), ack: p.readBE32(o + 8), flags: TCPSegment.Flags(rawValue: p[o + 13] & 0x1F),
            payload: payload, missing: missing))
    }
}
