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
/// Streaming: block bodies pass straight through; only a block's first 16 bytes are held
/// until they are complete.
struct PcapngInterfaceTypes {
    private enum Mode { case undecided, pcapng, passThrough }
    private var mode = Mode.undecided
    /// The current block's first bytes, until `headerLength` of them are in.
    private var header: [UInt8] = []
    /// Bytes of the current block after its header still to pass.
    private var body = 0
    private var bigEndian = false
    /// The current section's first interface: its LINKTYPE and snapshot length.
    private var first: (linkType: UInt16, snapshot: [UInt8])?
    private var interfaces = 0
    /// The first interface whose link layer differs from the section's first interface.
    private(set) var mixed: (interface: Int, linkType: UInt16, firstLinkType: UInt16)?

    static let sectionHeader: UInt32 = 0x0A0D_0D0A
    static let interfaceDescription: UInt32 = 1

    /// Filters `input`, appending what may be handed on to `out`.
    mutating func feed(_ input: UnsafeRawBufferPointer, into out: inout [UInt8]) {
        var i = 0
        while i < input.count {
            if mode == .pcapng, body == 0, header.isEmpty {
                // Blocks that pass unchanged (all but section headers and interface
                // descriptions), whole in `input`, are stepped over in place and copied in
                // one piece: one packet is one block, and holding each block's header was
                // most of this filter's cost.
                let end = unchangedBlocksEnd(input, from: i)
                if end > i {
                    out.append(contentsOf: UnsafeRawBufferPointer(rebasing: input[i ..< end]))
                    i = end
                    continue
                }
            }
            if mode == .passThrough || body > 0 {
                let n = mode == .passThrough ? input.count - i : min(body, input.count - i)
                out.append(contentsOf: UnsafeRawBufferPointer(rebasing: input[i ..< i + n]))
                i += n
                if mode != .passThrough { body -= n }
                continue
            }
            // A block's header bytes in one piece: up to the magic, the length, or the
            // header's full length (byte by byte, with a length computed per byte, this
            // filter was 4% of reading a pcapng).
            let want = mode == .undecided ? 4 : header.count < 8 ? 8 : headerLength
            let n = min(max(1, want - header.count), input.count - i)
            header.append(contentsOf: UnsafeRawBufferPointer(rebasing: input[i ..< i + n]))
            i += n
            if mode == .undecided, header.count == 4 {
                mode = header == [0x0A, 0x0D, 0x0D, 0x0A] ? .pcapng : .passThrough
                if mode == .passThrough { flush(into: &out); continue }
            }
            if header.count >= 8, header.count == headerLength { decide(); flush(into: &out) }
        }
    }

    /// Where the run of whole blocks starting at `start` that pass unchanged ends: each has
    /// a type other than section header and interface description and a length `decide`
    /// would accept, and lies whole in `input`. The first block that is not one of them is
    /// left to the byte-exact path.
    private func unchangedBlocksEnd(_ input: UnsafeRawBufferPointer, from start: Int) -> Int {
        var at = start
        while input.count - at >= 8 {
            let b = input.baseAddress! + at
            let type = UInt32(b.load(fromByteOffset: 0, as: UInt8.self)) << 24 | UInt32(b.load(fromByteOffset: 1, as: UInt8.self)) << 16
                | UInt32(b.load(fromByteOffset: 2, as: UInt8.self)) << 8 | UInt32(b.load(fromByteOffset: 3, as: UInt8.self))
            guard type != Self.sectionHeader, Self.word(type, bigEndian: bigEndian) != Self.interfaceDescription else { break }
            let rawLength = UInt32(b.load(fromByteOffset: 4, as: UInt8.self)) << 24 | UInt32(b.load(fromByteOffset: 5, as: UInt8.self)) << 16
                | UInt32(b.load(fromByteOffset: 6, as: UInt8.self)) << 8 | UInt32(b.load(fromByteOffset: 7, as: UInt8.self))
            let length = Int(Self.word(rawLength, bigEndian: bigEndian))
            guard length >= 12, length % 4 == 0, length <= input.count - at else { break }
            at += length
        }
        return at
    }

    /// A 32-bit word read as four bytes in file order, in the section's byte order.
    private static func word(_ fileOrder: UInt32, bigEndian: Bool) -> UInt32 { bigEndian ? fileOrder : fileOrder.byteSwapped }

    /// The end of the input: bytes still held go out as they are.
    mutating func finish(into out: inout [UInt8]) { flush(into: &out) }

    private mutating func flush(into out: inout [UInt8]) {
        out.append(contentsOf: header)
        header.removeAll(keepingCapacity: true)
    }

    /// How many bytes of the current block to hold: the byte-order magic of a section
    /// header, the link type and snapshot length of an interface description.
    private var headerLength: Int {
        switch rawType {
        case Self.sectionHeader: 12
        case _ where header.count >= 8 && word(0) == Self.interfaceDescription: 16
        default: 8
        }
    }

    private var rawType: UInt32 {
        UInt32(header[0]) << 24 | UInt32(header[1]) << 16 | UInt32(header[2]) << 8 | UInt32(header[3])
    }

    private func word(_ offset: Int) -> UInt32 {
        let (b0, b1, b2, b3) = (UInt32(header[offset]), UInt32(header[offset + 1]), UInt32(header[offset + 2]),
                                UInt32(header[offset + 3]))
        return bigEndian ? b0 << 24 | b1 << 16 | b2 << 8 | b3 : b3 << 24 | b2 << 16 | b1 << 8 | b0
    }

    /// A complete header: checks its length, notes a section or interface, rewrites a
    /// later interface of the first one's link layer.
    private mutating func decide() {
        if rawType == Self.sectionHeader {
            switch Array(header[8 ..< 12]) {
            case [0x1A, 0x2B, 0x3C, 0x4D]: bigEndian = true
            case [0x4D, 0x3C, 0x2B, 0x1A]: bigEndian = false
            default: mode = .passThrough; return
            }
            first = nil
            interfaces = 0
        }
        let length = Int(word(4))
        guard length >= header.count + 4, length % 4 == 0 else { mode = .passThrough; return }
        body = length - header.count
        guard rawType != Self.sectionHeader, word(0) == Self.interfaceDescription else { return }
        let linkType = bigEndian ? UInt16(header[8]) << 8 | UInt16(header[9]) : UInt16(header[9]) << 8 | UInt16(header[8])
        defer { interfaces += 1 }
        guard let first else {
            self.first = (linkType, Array(header[12 ..< 16]))
            return
        }
        guard Self.dlt(linkType) == Self.dlt(first.linkType) else {
            if mixed == nil { mixed = (interfaces, linkType, first.linkType) }
            return
        }
        let held = Self.dlt(first.linkType)
        header[8] = bigEndian ? UInt8(held >> 8) : UInt8(held & 0xFF)
        header[9] = bigEndian ? UInt8(held & 0xFF) : UInt8(held >> 8)
        header.replaceSubrange(12 ..< 16, with: first.snapshot)
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
