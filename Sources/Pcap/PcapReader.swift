import CPcap
import Glibc

/// Reads packets from a pcap or pcapng file (or stdin, "-") through libpcap, with times in
/// microseconds since the Unix epoch whatever the file's precision. Packets are handed out
/// in libpcap's own buffer: no copy, valid until the next call.
public final class PcapReader {
    private let handle: OpaquePointer
    public let path: String
    /// The link layer, from `pcap_datalink` (a DLT value).
    public let dlt: Int32
    public let linkType: LinkType?
    public let snapshotLength: Int
    /// Packets read so far.
    public private(set) var packetCount = 0

    /// One packet, pointing into libpcap's buffer.
    public struct Packet {
        /// Microseconds since the Unix epoch.
        public var time: Int64
        public var bytes: UnsafeRawBufferPointer
        /// The packet's length on the wire (longer than `bytes` when the snapshot cut it).
        public var wireLength: Int
    }

    /// Opens `path` ("-" for stdin) and applies a BPF `filter` if given.
    public init(path: String, filter: String? = nil) throws(PcapError) {
        var errorBuffer = [CChar](repeating: 0, count: Int(PCAP_ERRBUF_SIZE) + 1)
        guard let handle = pcap_open_offline_with_tstamp_precision(path, UInt32(PCAP_TSTAMP_PRECISION_NANO), &errorBuffer) else {
            throw PcapError("\(path): cannot read as pcap or pcapng: \(string(fromCBuffer: errorBuffer))")
        }
        self.handle = handle
        self.path = path
        dlt = pcap_datalink(handle)
        linkType = LinkType(dlt: dlt)
        snapshotLength = Int(pcap_snapshot(handle))
        // From here on `deinit` closes the handle, also when a filter is refused.
        if let filter {
            var program = bpf_program()
            guard pcap_compile(handle, &program, filter, 1, PCAP_NETMASK_UNKNOWN) == 0 else {
                let reason = String(cString: pcap_geterr(handle))
                throw PcapError("--filter '\(filter)': \(reason)")
            }
            defer { pcap_freecode(&program) }
            guard pcap_setfilter(handle, &program) == 0 else {
                let reason = String(cString: pcap_geterr(handle))
                throw PcapError("--filter '\(filter)': \(reason)")
            }
        }
    }

    deinit { pcap_close(handle) }

    /// The next packet, or nil at the end of the file.
    public func next() throws(PcapError) -> Packet? {
        var header: UnsafeMutablePointer<pcap_pkthdr>?
        var data: UnsafePointer<UInt8>?
        switch pcap_next_ex(handle, &header, &data) {
        case 1:
            guard let header, let data else { return nil }
            packetCount += 1
            let h = header.pointee
            let micros = Int64(h.ts.tv_sec) * 1_000_000 + Int64(h.ts.tv_usec) / 1000
            return Packet(time: micros, bytes: UnsafeRawBufferPointer(start: data, count: Int(h.caplen)),
                          wireLength: Int(h.len))
        case PCAP_ERROR_BREAK:
            return nil
        default:
            // A torn file: libpcap reports "truncated dump file" and the like.
            throw PcapError("\(path): packet \(packetCount + 1): \(String(cString: pcap_geterr(handle)))")
        }
    }
}
