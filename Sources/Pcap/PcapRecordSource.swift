import Capture
import Glibc
import JSON

/// A pcap or pcapng file as capture records: the same open, upgrade, frame, end and note
/// records the proxy writes, decoded packet by packet as they are asked for, so memory stays
/// bounded by the open connections and never by the file's size.
public struct PcapRecordSource: RecordSource {
    public struct Limits: Sendable {
        public var tcp = TCPReassembler.Limits()
        /// TCP flows tracked at once. Flows that carried no data yet take at most half and
        /// are forgotten after `DatalessFlows.expiry`; when flows carrying data fill it,
        /// later flows' packets are ignored and the read ends with an error once its
        /// records are out (exit status 2), as it does when `maxConnections` drops one.
        public var maxFlows = 100_000
        /// WebSocket connections open at once (ended ones are forgotten, so this bounds
        /// memory, not the capture's length); more are ignored with a warning.
        public var maxConnections = 10_000
        public var maxPayload = 64 << 20
        public init() {}
    }

    public let header: CaptureHeader
    public var warnings: [String] {
        if let replaced = sharded?.serialWarnings { return replaced }
        var list = sharded?.warnings ?? state.warningList()
        if reader.badTimestamps > 0 {
            list.append("\(reader.badTimestamps) packets skipped: timestamp negative or beyond year 146,000 "
                        + "(first: packet \(reader.firstBadTimestamp ?? 0))")
        }
        return list
    }

    private let reader: PcapReader
    private let state: DecoderState
    /// The decoding on several threads, when asked for (then `state` stays unused).
    private var sharded: ShardedPcapDecoder?
    private var pendingPacket: PcapReader.Packet?
    private var batch = PacketBatch()
    private var finished = false
    /// Corruption in the middle of the file: thrown once the records decoded before it
    /// are out.
    private var failure: PcapError?

    /// Opens `path` ("-" for stdin). `tool` goes into the synthesized header ("faultline 0.1.0").
    /// With `jobs` above 1 a regular file's flows are decoded on that many threads
    /// (`ShardedPcapDecoder`); the records are the same, in the same order.
    public init(path: String, filter: String? = nil, tool: String, limits: Limits = Limits(), jobs: Int = 1) throws(PcapError) {
        guard jobs > 1, path != "-", Self.isRegularFile(path) else {
            try self.init(reader: try PcapReader(path: path, filter: filter), filter: filter, tool: tool, limits: limits)
            return
        }
        try self.init(reader: try PcapReader(path: path, filter: filter), filter: filter, tool: tool, limits: limits,
                      jobs: jobs) { () throws(PcapError) in try PcapReader(path: path, filter: filter) }
    }

    /// An open reader decoded on `jobs` threads; `reopen` reads the same packets again from
    /// the start, for the serial read that takes over where a global bound decides (see
    /// `ShardedPcapDecoder`; the fuzz target's reader reads from memory).
    package init(reader: PcapReader, filter: String? = nil, tool: String, limits: Limits = Limits(), jobs: Int,
                 reopen: @escaping () throws(PcapError) -> PcapReader) throws(PcapError) {
        try self.init(reader: reader, filter: filter, tool: tool, limits: limits)
        guard jobs > 1, let link = reader.linkType else { return }
        sharded = ShardedPcapDecoder(reader: reader, first: pendingPacket, link: link, startedAt: header.startedAt,
                                     jobs: jobs, limits: limits, initialWarnings: state.warningList()) { () throws(PcapError) in
            try PcapRecordSource(reader: try reopen(), filter: filter, tool: tool, limits: limits)
        }
        pendingPacket = nil
    }

    private static func isRegularFile(_ path: String) -> Bool {
        var st = stat()
        return stat(path, &st) == 0 && st.st_mode & S_IFMT == S_IFREG
    }

    /// Decodes an open reader (one reading from memory, in the fuzz target).
    public init(reader: PcapReader, filter: String? = nil, tool: String, limits: Limits = Limits()) throws(PcapError) {
        let path = reader.path
        self.reader = reader
        guard let link = reader.linkType else {
            throw PcapError("\(path): link type \(reader.dlt) is not supported "
                            + "(Ethernet, Linux cooked SLL/SLL2, BSD loopback/NULL and raw IP are)")
        }
        var first: PcapReader.Packet?
        var torn: String?
        do {
            first = try reader.next()
        } catch {
            guard error.isTornTail else { throw error }
            torn = error.message
        }
        pendingPacket = first
        var settings = JSONObject()
        settings["input"] = .string(path)
        settings["filter"] = filter.map { .string($0) } ?? .null
        header = CaptureHeader(tool: tool, startedAt: first?.time ?? 0, source: "pcap", settings: settings)
        state = DecoderState(link: link, startedAt: first?.time ?? 0, limits: limits)
        if let torn { state.warn(torn) }
    }

    /// What the file held so far: packets, TCP flows, their ports.
    public var inventory: TrafficInventory { sharded?.inventory ?? state.inventory }
    /// The BPF filter the packets were read through, if any.
    public var filter: String? { header.settings["filter"]?.stringValue }

    /// How the read went, for tests: on shards to the end, on shards and then serially
    /// (a global bound was reached), or serially throughout.
    enum Decoding { case sharded, shardedThenSerial, serial }
    var decoding: Decoding {
        guard let sharded else { return .serial }
        return sharded.wentSerial ? .shardedThenSerial : .sharded
    }

    /// TCP flows held in memory now (for tests of the memory bounds).
    var trackedFlows: Int { state.flowCount }

    public mutating func next() throws -> CaptureRecord? {
        if let sharded { return try sharded.next() }
        while true {
            if let record = state.queue.popFirst() { return record }
            if let failure {
                self.failure = nil
                throw failure
            }
            if finished { return nil }
            batch.removeAll()
            if let packet = pendingPacket {
                pendingPacket = nil
                batch.append(packet)
            }
            var torn: String?
            var atEnd = false
            do {
                while !batch.isFull {
                    guard let packet = try reader.next() else { atEnd = true; break }
                    batch.append(packet)
                }
            } catch {
                // A torn tail (a capture still being written, or cut): keep what was read.
                // Corruption with data after it: an error once the packets before are out.
                if error.isTornTail { torn = error.message } else { failure = error }
            }
            state.handle(batch)
            if atEnd || torn != nil || failure != nil {
                if let torn { state.warn(torn) }
                finished = true
                if failure == nil {
                    state.finish(at: state.tally.lastTime)
                    // A cap dropped data: the records are out, but the read is no pass.
                    if let dropped = state.droppedData() { failure = PcapError("\(reader.path): \(dropped)") }
                }
            }
        }
    }
}
