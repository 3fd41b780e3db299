/// The link layers Faultline decodes, by the DLT value `pcap_datalink` returns (not the
/// LINKTYPE written in the file: raw IP is DLT 12 in memory, LINKTYPE 101 on disk).
public enum LinkType: Sendable, Hashable {
    /// BSD loopback: a 4-byte address family in the capturing host's byte order.
    case null
    /// OpenBSD loopback: the same family word, in network byte order.
    case loop
    /// Ethernet II, with any number of 802.1Q / 802.1ad (QinQ) tags.
    case ethernet
    /// Raw IPv4 or IPv6, told apart by the version nibble.
    case raw
    case ipv4
    case ipv6
    /// Linux "cooked" capture v1 (`tcpdump -i any`), 16-byte header.
    case linuxSLL
    /// Linux "cooked" capture v2, 20-byte header.
    case linuxSLL2

    /// Maps a DLT value; nil for link types Faultline does not decode.
    public init?(dlt: Int32) {
        switch dlt {
        case 0: self = .null
        case 108: self = .loop
        case 1: self = .ethernet
        case 12, 14, 101: self = .raw
        case 228: self = .ipv4
        case 229: self = .ipv6
        case 113: self = .linuxSLL
        case 276: self = .linuxSLL2
        default: return nil
        }
    }

    /// The DLT value to hand `pcap_open_dead` when writing.
    public var dlt: Int32 {
        switch self {
        case .null: 0
        case .loop: 108
        case .ethernet: 1
        case .raw: 12
        case .ipv4: 228
        case .ipv6: 229
        case .linuxSLL: 113
        case .linuxSLL2: 276
        }
    }
}

/// The network-layer protocol found under a link header.
enum NetworkProtocol {
    case ipv4, ipv6, other
}

extension LinkType {
    /// Where the IP header starts in `packet` and which IP version it is; nil when the
    /// packet is too short or carries something other than IP (ARP, LLDP...).
    func networkLayer(of packet: UnsafeRawBufferPointer) -> (offset: Int, proto: NetworkProtocol)? {
        switch self {
        case .null, .loop:
            guard packet.count >= 4 else { return nil }
            let family: UInt32
            if self == .loop {
                family = packet.readBE32(0)
            } else {
                // Host byte order of the capturing machine: read both ways, families are small.
                let le = UInt32(packet[0]) | UInt32(packet[1]) << 8 | UInt32(packet[2]) << 16 | UInt32(packet[3]) << 24
                family = le < 0x10000 ? le : packet.readBE32(0)
            }
            switch family {
            case 2: return (4, .ipv4)
            case 10, 24, 28, 30: return (4, .ipv6)
            default: return (4, .other)
            }
        case .ethernet:
            var offset = 12
            while true {
                guard packet.count >= offset + 2 else { return nil }
                let type = packet.readBE16(offset)
                switch type {
                case 0x8100, 0x88A8, 0x9100:
                    offset += 4
                case 0x0800: return (offset + 2, .ipv4)
                case 0x86DD: return (offset + 2, .ipv6)
                default: return (offset + 2, .other)
                }
            }
        case .raw:
            guard packet.count >= 1 else { return nil }
            switch packet[0] >> 4 {
            case 4: return (0, .ipv4)
            case 6: return (0, .ipv6)
            default: return (0, .other)
            }
        case .ipv4: return (0, .ipv4)
        case .ipv6: return (0, .ipv6)
        case .linuxSLL:
            guard packet.count >= 16 else { return nil }
            return (16, Self.etherType(packet.readBE16(14)))
        case .linuxSLL2:
            guard packet.count >= 20 else { return nil }
            return (20, Self.etherType(packet.readBE16(0)))
        }
    }

    private static func etherType(_ type: UInt16) -> NetworkProtocol {
        switch type {
        case 0x0800: .ipv4
        case 0x86DD: .ipv6
        default: .other
        }
    }
}
