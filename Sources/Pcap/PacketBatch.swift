/// A few packets copied out of libpcap's buffer (which holds only the latest one), so the
/// decoder can look at all of them before decoding any: it decodes their headers, asks the
/// CPU to fetch each one's flow-table slot and then each one's connection, and only then
/// decodes them in order. With thousands of connections open, a packet's flow state is
/// almost never in cache; fetched one packet at a time those misses came one after another,
/// fetched for a batch they overlap each other and the decoding of the packets before.
struct PacketBatch {
    /// Enough packets to cover the memory latency, few enough to keep their bytes in L1.
    static let capacity = 16

    struct Entry {
        var time: Int64
        var start: Int
        var count: Int
    }

    private(set) var bytes: [UInt8] = []
    private(set) var entries: [Entry] = []

    init() {
        bytes.reserveCapacity(64 << 10)
        entries.reserveCapacity(Self.capacity)
    }

    var count: Int { entries.count }
    var isFull: Bool { entries.count >= Self.capacity }

    mutating func append(_ packet: PcapReader.Packet) {
        entries.append(Entry(time: packet.time, start: bytes.count, count: packet.bytes.count))
        // As typed bytes: appending a raw buffer went byte by byte instead of one memcpy.
        packet.bytes.withMemoryRebound(to: UInt8.self) { bytes.append(contentsOf: $0) }
    }

    mutating func removeAll() {
        bytes.removeAll(keepingCapacity: true)
        entries.removeAll(keepingCapacity: true)
    }
}
