/// Recognises packet captures by their first bytes, never by file name.
public enum PcapMagic {
    /// pcap (microsecond or nanosecond stamps, either byte order) or pcapng (a Section
    /// Header Block, type 0x0A0D0D0A).
    public static func matches(_ head: [UInt8]) -> Bool {
        guard head.count >= 4 else { return false }
        let magic = Array(head[0..<4])
        return [[0xA1, 0xB2, 0xC3, 0xD4], [0xD4, 0xC3, 0xB2, 0xA1],   // microseconds
                [0xA1, 0xB2, 0x3C, 0x4D], [0x4D, 0x3C, 0xB2, 0xA1],   // nanoseconds
                [0x0A, 0x0D, 0x0D, 0x0A]].contains(magic)             // pcapng
    }
}
