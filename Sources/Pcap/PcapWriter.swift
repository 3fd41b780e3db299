import CPcap
import Glibc

/// Writes packets to a classic pcap file through libpcap (`pcap_dump`), with microsecond
/// stamps, or nanosecond ones (the other magic number) when asked.
public final class PcapWriter {
    private let dead: OpaquePointer
    private let dumper: OpaquePointer
    public let path: String

    /// Creates `path` for packets of `link`.
    public init(path: String, link: LinkType, snapshotLength: Int32 = 262_144, nanoseconds: Bool = false) throws(PcapError) {
        let precision = UInt32(nanoseconds ? PCAP_TSTAMP_PRECISION_NANO : PCAP_TSTAMP_PRECISION_MICRO)
        guard let dead = pcap_open_dead_with_tstamp_precision(link.dlt, snapshotLength, precision) else {
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
        self.nanoseconds = nanoseconds
    }

    public let nanoseconds: Bool

    /// Appends one packet stamped `time` microseconds since the Unix epoch (plus
    /// `extraNanoseconds` in a nanosecond file).
    public func write(_ packet: [UInt8], time: Int64, wireLength: Int? = nil, extraNanoseconds: Int = 0) {
        var header = pcap_pkthdr()
        header.ts.tv_sec = time_t(time / 1_000_000)
        // In a nanosecond file libpcap takes this field as nanoseconds.
        header.ts.tv_usec = suseconds_t(nanoseconds ? (time % 1_000_000) * 1000 + Int64(extraNanoseconds) : time % 1_000_000)
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
