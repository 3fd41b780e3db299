import Glibc

/// Writes a pcapng file (one section, one raw-IP interface, microsecond stamps) with an
/// optional comment on each packet (`opt_comment`), which Wireshark shows as
/// `frame.comment`. libpcap writes only classic pcap, which has no place for a comment.
/// Layout per the pcapng specification (draft-ietf-opsawg-pcapng): a Section Header Block,
/// an Interface Description Block, then one Enhanced Packet Block a packet.
public final class PcapngWriter {
    public let path: String
    private let file: UnsafeMutablePointer<FILE>
    private var closed = false
    private static let snapshotLength: UInt32 = 262_144

    /// Creates (or replaces) `path` for packets of the on-disk LINKTYPE `linktype`
    /// (101: raw IPv4/IPv6, what the exporter writes).
    public init(path: String, linktype: UInt16 = 101) throws(PcapError) {
        guard let file = fopen(path, "wb") else {
            throw PcapError("\(path): cannot create: \(String(cString: strerror(errno)))")
        }
        self.path = path
        self.file = file
        // Section Header Block: byte-order magic, version 1.0, section length unknown (-1).
        var shb: [UInt8] = []
        Self.put32(&shb, 0x1A2B_3C4D)
        Self.put16(&shb, 1)
        Self.put16(&shb, 0)
        shb += [UInt8](repeating: 0xFF, count: 8)
        writeBlock(type: 0x0A0D_0D0A, body: shb)
        // Interface Description Block: link type, reserved, snapshot length; default
        // resolution (if_tsresol absent) is microseconds.
        var idb: [UInt8] = []
        Self.put16(&idb, linktype)
        Self.put16(&idb, 0)
        Self.put32(&idb, Self.snapshotLength)
        writeBlock(type: 1, body: idb)
    }

    /// Appends one packet stamped `time` microseconds since the Unix epoch, with `comment`
    /// (UTF-8) when given.
    public func write(_ packet: [UInt8], time: Int64, comment: String? = nil) {
        var body: [UInt8] = []
        Self.put32(&body, 0)   // interface 0
        let stamp = UInt64(bitPattern: time)
        Self.put32(&body, UInt32(truncatingIfNeeded: stamp >> 32))
        Self.put32(&body, UInt32(truncatingIfNeeded: stamp))
        Self.put32(&body, UInt32(truncatingIfNeeded: packet.count))
        Self.put32(&body, UInt32(truncatingIfNeeded: packet.count))
        body += packet
        Self.pad(&body)
        if let comment, !comment.isEmpty {
            let text = Array(comment.utf8.prefix(65_000))
            Self.put16(&body, 1)   // opt_comment
            Self.put16(&body, UInt16(text.count))
            body += text
            Self.pad(&body)
            Self.put32(&body, 0)   // opt_endofopt
        }
        writeBlock(type: 6, body: body)
    }

    /// Flushes and closes the file; the writer must not be used afterwards.
    public func close() {
        guard !closed else { return }
        closed = true
        fclose(file)
    }

    deinit { close() }

    private func writeBlock(type: UInt32, body: [UInt8]) {
        var block: [UInt8] = []
        let total = UInt32(truncatingIfNeeded: 12 + body.count)
        Self.put32(&block, type)
        Self.put32(&block, total)
        block += body
        Self.put32(&block, total)
        _ = block.withUnsafeBytes { fwrite($0.baseAddress, 1, $0.count, file) }
    }

    // Little-endian, the byte order the magic declares.
    private static func put16(_ out: inout [UInt8], _ value: UInt16) {
        out += [UInt8(truncatingIfNeeded: value), UInt8(truncatingIfNeeded: value >> 8)]
    }

    private static func put32(_ out: inout [UInt8], _ value: UInt32) {
        out += [UInt8(truncatingIfNeeded: value), UInt8(truncatingIfNeeded: value >> 8),
                UInt8(truncatingIfNeeded: value >> 16), UInt8(truncatingIfNeeded: value >> 24)]
    }

    private static func pad(_ out: inout [UInt8]) {
        while out.count % 4 != 0 { out.append(0) }
    }
}
