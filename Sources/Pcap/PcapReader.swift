import Capture
import CPcap
import Glibc
import Vocabulary

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
    @exclusivity(unchecked) public private(set) var packetCount = 0
    /// Packets skipped because their timestamp is negative or beyond `RecordTime.limit`,
    /// and the number of the first one (for the warning).
    @exclusivity(unchecked) public private(set) var badTimestamps = 0
    @exclusivity(unchecked) public private(set) var firstBadTimestamp: Int?
    /// What libpcap reads through (owned by libpcap's stream, closed with it).
    private let interfaces: InterfaceTypeStream

    /// One packet, pointing into libpcap's buffer.
    public struct Packet {
        /// Microseconds since the Unix epoch.
        public var time: Int64
        public var bytes: UnsafeRawBufferPointer
        /// The packet's length on the wire (longer than `bytes` when the snapshot cut it).
        public var wireLength: Int
    }

    /// Opens `path` ("-" for stdin) and applies a BPF `filter` if given.
    public convenience init(path: String, filter: String? = nil) throws(PcapError) {
        let file = path == "-" ? fdopen(dup(STDIN_FILENO), "rb") : fopen(path, "rb")
        guard let file else {
            throw PcapError("\(path): cannot read as pcap or pcapng: \(String(cString: strerror(errno)))")
        }
        try self.init(file: file, name: path, filter: filter)
    }

    /// Reads an open stream (the fuzz target's `fmemopen` of its input), named `name` in
    /// messages. The reader owns `file` from here on: libpcap closes it, also on failure.
    /// libpcap reads it through `InterfaceTypeStream`, which reads pcapng interfaces'
    /// link types where libpcap does not.
    public convenience init(file: UnsafeMutablePointer<FILE>, name: String, filter: String? = nil) throws(PcapError) {
        guard let (stream, interfaces) = InterfaceTypeStream.wrap(file) else {
            fclose(file)
            throw PcapError("\(name): cannot read: \(String(cString: strerror(errno)))")
        }
        var errorBuffer = [CChar](repeating: 0, count: Int(PCAP_ERRBUF_SIZE) + 1)
        guard let handle = pcap_fopen_offline_with_tstamp_precision(stream, UInt32(PCAP_TSTAMP_PRECISION_NANO), &errorBuffer) else {
            let reason = interfaces.mixedLinkTypes ?? string(fromCBuffer: errorBuffer)
            fclose(stream)
            throw PcapError("\(name): cannot read as pcap or pcapng: \(reason)")
        }
        try self.init(handle: handle, path: name, filter: filter, interfaces: interfaces)
    }

    private init(handle: OpaquePointer, path: String, filter: String?, interfaces: InterfaceTypeStream) throws(PcapError) {
        self.handle = handle
        self.path = path
        self.interfaces = interfaces
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

    /// A packet time (seconds and, at nanosecond precision, nanoseconds) in microseconds,
    /// or nil when it is outside `RecordTime`'s range. A pcapng timestamp is a 64-bit count
    /// of any unit: 2^63 us and more once trapped the multiplication here.
    static func micros(_ ts: timeval) -> Int64? {
        let (scaled, overflow) = Int64(ts.tv_sec).multipliedReportingOverflow(by: 1_000_000)
        guard !overflow else { return nil }
        let (micros, overflow2) = scaled.addingReportingOverflow(Int64(ts.tv_usec) / 1000)
        guard !overflow2, micros >= 0, RecordTime.isValid(micros) else { return nil }
        return micros
    }

    /// Why libpcap stopped. A file cut short (a capture still being written, or a copy
    /// cut off) has libpcap's reader at the end of the file: a torn tail, whose packets
    /// before it are good. Anything else (a record header with a length of 0xFFFFFFFF, a
    /// pcapng block that makes no sense) is corruption with data after it: libpcap cannot
    /// skip it, so the rest of the file would go unread, and that is an error, not a
    /// warning, naming where it stopped and how much was left.
    private func readError() -> PcapError {
        let reason = String(cString: pcap_geterr(handle))
        let place = "packet \(packetCount + 1)"
        if let mixed = interfaces.mixedLinkTypes { return PcapError("\(path): \(place): \(mixed)", tornTail: false) }
        guard let file = pcap_file(handle), feof(file) == 0 else {
            return PcapError("\(path): \(place): \(reason)", tornTail: true)
        }
        let offset = ftello(file)
        var size: off_t = -1
        var st = stat()
        if fstat(interfaces.sourceDescriptor, &st) == 0, st.st_mode & S_IFMT == S_IFREG { size = st.st_size }
        var message = "\(path): \(place)"
        if offset >= 0 { message += ", byte offset \(offset)" }
        message += ": corrupt packet record in the middle of the file (\(reason))"
        if size >= 0, offset >= 0, size >= offset { message += "; \(size - offset) of \(size) bytes after it not read" }
        message += "; only a torn tail at the very end of a file is tolerated"
        return PcapError(message, tornTail: false)
    }

    /// The next packet, or nil at the end of the file.
    public func next() throws(PcapError) -> Packet? {
        var header: UnsafeMutablePointer<pcap_pkthdr>?
        var data: UnsafePointer<UInt8>?
        while true {
            switch pcap_next_ex(handle, &header, &data) {
            case 1:
                guard let header, let data else { return nil }
                packetCount += 1
                let h = header.pointee
                guard let time = Self.micros(h.ts) else {
                    badTimestamps += 1
                    if firstBadTimestamp == nil { firstBadTimestamp = packetCount }
                    continue
                }
                return Packet(time: time, bytes: UnsafeRawBufferPointer(start: data, count: Int(h.caplen)),
                              wireLength: Int(h.len))
            case PCAP_ERROR_BREAK:
                return nil
            default:
                throw readError()
            }
        }
    }
}
