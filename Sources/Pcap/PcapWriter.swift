import CPcap
import Glibc

/// Writes packets to a classic pcap file through libpcap (`pcap_dump`), microsecond stamps.
public final class PcapWriter {
    private let dead: OpaquePointer
    private let dumper: OpaquePointer
    public let path: String

    /// Creates `path` for packets of `link`.
    public init(path: String, link: LinkType, snapshotLength: Int32 = 262_144) throws(PcapError) {
        guard let dead = pcap_open_dead(link.dlt, snapshotLength) else {
            throw PcapError("\(path): libpcap cannot write link type \(link.dlt)")
        }
        guard let dumper = pcap_dump_open(dead, path) else {
            let reason = String(cString: pcap_geterr(dead))
            pcap_close(dead)
            throw PcapError("\(path): cannot create: \(reason)")
        }
        self.dead = dead
        self.dumper = dumper
        self.path = path
    }

    /// Appends one packet stamped `time` microseconds since the Unix epoch.
    public func write(_ packet: [UInt8], time: Int64, wireLength: Int? = nil) {
        var header = pcap_pkthdr()
        header.ts.tv_sec = time_t(time / 1_000_000)
        header.ts.tv_usec = suseconds_t(time % 1_000_000)
        header.caplen = bpf_u_int32(packet.count)
        header.len = bpf_u_int32(wireLength ?? packet.count)
        packet.withUnsafeBufferPointer { buffer in
            pcap_dump(UnsafeMutableRawPointer(dumper).assumingMemoryBound(to: UInt8.self), &header, buffer.baseAddress)
        }
    }

    /// Flushes and closes the file; the writer must not be used afterwards.
    public func close() {
        pcap_dump_close(dumper)
        pcap_close(dead)
        closed = true
    }

    private var closed = false

    deinit { if !closed { close() } }
}
