import Vocabulary

/// The first look at every packet, before any flow is involved: its time made relative and
/// kept monotonic, its link, IP and TCP headers decoded, and the counts behind the
/// warnings (fragments, malformed and truncated packets). One decoder's reading thread owns
/// it, the serial `DecoderState` and the sharded dispatcher alike, so both count the same.
struct PacketTally {
    let link: LinkType
    let startedAt: Int64
    private(set) var packetIndex = 0
    private(set) var lastTime: Micros = 0
    private(set) var packets = 0
    private(set) var tcpPackets = 0
    private var fragments = 0
    private var malformed = 0
    private var firstMalformed: String?
    private var truncatedPackets = 0

    init(link: LinkType, startedAt: Int64) {
        self.link = link
        self.startedAt = startedAt
    }

    /// The packet's TCP segment (pointing into `bytes`) and its time since the capture's
    /// start, or nil for a packet that is not TCP or not decodable (counted).
    @inline(__always)
    mutating func decode(_ bytes: UnsafeRawBufferPointer, time: Int64) -> (segment: TCPSegment, t: Micros)? {
        packetIndex += 1
        packets += 1
        let t = max(time - startedAt, lastTime)
        lastTime = t
        switch PacketDecoder.decode(bytes, link: link) {
        case .notTCP:
            return nil
        case .fragment:
            fragments += 1
            return nil
        case .malformed(let reason):
            malformed += 1
            if firstMalformed == nil { firstMalformed = "packet \(packetIndex): \(reason)" }
            return nil
        case .tcp(let segment):
            tcpPackets += 1
            if segment.missing > 0 { truncatedPackets += 1 }
            return (segment, t)
        }
    }

    /// The counts' warnings, in the order the decoder has always given them.
    var warnings: [String] {
        var list: [String] = []
        if fragments > 0 { list.append("\(fragments) IP fragments ignored (IP reassembly is not supported)") }
        if malformed > 0 { list.append("\(malformed) malformed packets skipped (first: \(firstMalformed ?? ""))") }
        if truncatedPackets > 0 { list.append("\(truncatedPackets) TCP packets cut by the snapshot length") }
        return list
    }
}
