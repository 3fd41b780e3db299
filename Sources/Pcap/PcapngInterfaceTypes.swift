/// Makes libpcap read pcapngs whose interfaces share a link type. libpcap keeps the first
/// interface's link type as a DLT value and compares each later Interface Description
/// Block's LINKTYPE with it, so two raw-IP interfaces (LINKTYPE 101, DLT 12) are refused
/// as "different from the type of the first interface", and the file ends as a corrupt
/// packet record; it refuses a later interface with another snapshot length the same way.
///
/// This filter sits between the file and libpcap and reads every block header itself:
/// each later interface whose link type maps to the first one's is rewritten to the values
/// libpcap holds (the DLT, the first snapshot length), so its packets are read with the
/// first interface's link layer, which is theirs. An interface with another link layer is
/// left alone and remembered (`mixed`) for the error message: one link layer per file is
/// what the decoder supports. Anything that is not a pcapng, and any block header that
/// makes no sense, passes through untouched from there on (libpcap reports it).
///
/// In place: the filter rewrites bytes where they lie and never changes their number, so the
/// stream reads the file straight into libpcap's buffer and filters it there (as a copy per
/// step, the file was copied twice more on its way to libpcap). Block bodies are stepped
/// over; only a block header cut by the end of a read is held back, to be filtered again
/// with the bytes after it.
struct PcapngInterfaceTypes {
    private enum Mode { case undecided, pcapng, passThrough }
    private var mode = Mode.undecided
    /// Bytes of the current block after its header still to pass.
    private var body = 0
    private var bigEndian = false
    /// The current section's first interface: its LINKTYPE and snapshot length (four bytes
    /// in file order).
    private var first: (linkType: UInt16, snapshot: UInt32)?
    private var interfaces = 0
    /// The first interface whose link layer differs from the section's first interface.
    private(set) var mixed: (interface: Int, linkType: UInt16, firstLinkType: UInt16)?

    static let sectionHeader: UInt32 = 0x0A0D_0D0A
    static let interfaceDescription: UInt32 = 1
    /// The most bytes of a block `filter` needs at once: an interface description's link
    /// type and snapshot length end at byte 16.
    static let longestHeader = 16

    /// Filters `bytes` in place and returns how many of them, from the start, are final.
    /// The rest (fewer than `longestHeader`) begin a block header the read cut: they must
    /// come again at the start of the next call, with the bytes that follow them; at the
    /// end of the input they pass as they are.
    mutating func filter(_ bytes: UnsafeMutableRawBufferPointer) -> Int {
        var i = 0
        while i < bytes.count {
            switch mode {
            case .passThrough:
                return bytes.count
            case .undecided:
                guard bytes.count - i >= 4 else { return i }
                mode = Self.rawWord(bytes, at: i) == Self.sectionHeader ? .pcapng : .passThrough
            case .pcapng:
                if body > 0 {
                    let n = min(body, bytes.count - i)
                    body -= n
                    i += n
                    continue
                }
                // A block header: its type and length, then what `decide` reads of it.
                guard bytes.count - i >= 8 else { return i }
                let length = headerLength(bytes, at: i)
                guard bytes.count - i >= length else { return i }
                decide(UnsafeMutableRawBufferPointer(rebasing: bytes[i ..< i + length]))
                i += length
            }
        }
        return bytes.count
    }

    /// A 32-bit word as four bytes in file order (most significant first).
    private static func rawWord(_ bytes: UnsafeMutableRawBufferPointer, at offset: Int) -> UInt32 {
        UInt32(bytes[offset]) << 24 | UInt32(bytes[offset + 1]) << 16 | UInt32(bytes[offset + 2]) << 8 | UInt32(bytes[offset + 3])
    }

    /// A 32-bit word in the section's byte order.
    private func word(_ bytes: UnsafeMutableRawBufferPointer, at offset: Int) -> UInt32 {
        let raw = Self.rawWord(bytes, at: offset)
        return bigEndian ? raw : raw.byteSwapped
    }

    /// How many bytes of the block at `offset` to look at: the byte-order magic of a
    /// section header, the link type and snapshot length of an interface description.
    private func headerLength(_ bytes: UnsafeMutableRawBufferPointer, at offset: Int) -> Int {
        if Self.rawWord(bytes, at: offset) == Self.sectionHeader { return 12 }
        return word(bytes, at: offset) == Self.interfaceDescription ? Self.longestHeader : 8
    }

    /// A complete header: checks its length, notes a section or interface, rewrites a
    /// later interface of the first one's link layer.
    private mutating func decide(_ header: UnsafeMutableRawBufferPointer) {
        let isSection = Self.rawWord(header, at: 0) == Self.sectionHeader
        if isSection {
            switch Self.rawWord(header, at: 8) {
            case 0x1A2B_3C4D: bigEndian = true
            case 0x4D3C_2B1A: bigEndian = false
            default: mode = .passThrough; return
            }
            first = nil
            interfaces = 0
        }
        let length = Int(word(header, at: 4))
        guard length >= header.count + 4, length % 4 == 0 else { mode = .passThrough; return }
        body = length - header.count
        guard !isSection, word(header, at: 0) == Self.interfaceDescription else { return }
        let linkType = bigEndian ? UInt16(header[8]) << 8 | UInt16(header[9]) : UInt16(header[9]) << 8 | UInt16(header[8])
        defer { interfaces += 1 }
        guard let first else {
            self.first = (linkType, Self.rawWord(header, at: 12))
            return
        }
        guard Self.dlt(linkType) == Self.dlt(first.linkType) else {
            if mixed == nil { mixed = (interfaces, linkType, first.linkType) }
            return
        }
        let held = Self.dlt(first.linkType)
        header[8] = bigEndian ? UInt8(held >> 8) : UInt8(held & 0xFF)
        header[9] = bigEndian ? UInt8(held & 0xFF) : UInt8(held >> 8)
        header.storeBytes(of: first.snapshot.bigEndian, toByteOffset: 12, as: UInt32.self)
    }

    /// libpcap's LINKTYPE to DLT mapping where the two differ on Linux (raw IP and ATM
    /// RFC 1483); every other value is the same in both.
    static func dlt(_ linkType: UInt16) -> UInt16 {
        switch linkType {
        case 101: 12
        case 100: 11
        default: linkType
        }
    }
}
