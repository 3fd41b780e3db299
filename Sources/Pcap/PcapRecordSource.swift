import Capture
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
        var list = state.warningList()
        if reader.badTimestamps > 0 {
            list.append("\(reader.badTimestamps) packets skipped: timestamp negative or beyond year 146,000 "
                        + "(first: packet \(reader.firstBadTimestamp ?? 0))")
        }
        return list
    }

    private let reader: PcapReader
    private let state: DecoderState
    private var pendingPacket: PcapReader.Packet?
    private var batch = PacketBatch()
    private var finished = false
    /// Corruption in the middle of the file: thrown once the records decoded before it
    /// are out.
    private var failure: PcapError?

    /// Opens `path` ("-" for stdin). `tool` goes into the synthesized header ("faultline 0.1.0").
    public init(path: String, filter: String? = nil, tool: String, limits: Limits = Limits()) throws(PcapError) {
        try self.init(reader: try PcapReader(path: path, filter: filter), filter: filter, tool: tool, limits: limits)
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
    public var inventory: TrafficInventory { state.inventory }
    /// The BPF filter the packets were read through, if any.
    public var filter: String? { header.settings["filter"]?.stringValue }

    /// TCP flows held in memory now (for tests of the memory bounds).
    var trackedFlows: Int { state.flowCount }

    public mutating func next() throws -> CaptureRecord? {
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
                    state.finish()
                    // A cap dropped data: the records are out, but the read is no pass.
                    if let dropped = state.droppedData() { failure = PcapError("\(reader.path): \(dropped)") }
                }
            }
        }
    }
}
