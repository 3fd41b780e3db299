import Capture
import JSON

/// A pcap or pcapng file as capture records: the same open, upgrade, frame, end and note
/// records the proxy writes, decoded packet by packet as they are asked for, so memory stays
/// bounded by the open connections and never by the file's size.
public struct PcapRecordSource: RecordSource {
    public struct Limits: Sendable {
        public var tcp = TCPReassembler.Limits()
        /// TCP flows tracked at once; packets of flows beyond this are ignored with a warning.
        public var maxFlows = 100_000
        /// WebSocket connections open at once (ended ones are forgotten, so this bounds
        /// memory, not the capture's length); more are ignored with a warning.
        public var maxConnections = 10_000
        public var maxPayload = 64 << 20
        public init() {}
    }

    public let header: CaptureHeader
    public var warnings: [String] { state.warningList() }

    private let reader: PcapReader
    private let state: DecoderState
    private var pendingPacket: PcapReader.Packet?
    private var batch = PacketBatch()
    private var finished = false

    /// Opens `path` ("-" for stdin). `tool` goes into the synthesized header ("faultline 0.1.0").
    public init(path: String, filter: String? = nil, tool: String, limits: Limits = Limits()) throws(PcapError) {
        reader = try PcapReader(path: path, filter: filter)
        guard let link = reader.linkType else {
            throw PcapError("\(path): link type \(reader.dlt) is not supported "
                            + "(Ethernet, Linux cooked SLL/SLL2, BSD loopback/NULL and raw IP are)")
        }
        var first: PcapReader.Packet?
        var torn: String?
        do { first = try reader.next() } catch { torn = error.message }
        pendingPacket = first
        var settings = JSONObject()
        settings["input"] = .string(path)
        settings["filter"] = filter.map { .string($0) } ?? .null
        header = CaptureHeader(tool: tool, startedAt: first?.time ?? 0, source: "pcap", settings: settings)
        state = DecoderState(link: link, startedAt: first?.time ?? 0, limits: limits)
        if let torn { state.warn(torn) }
    }

    /// TCP flows held in memory now (for tests of the memory bounds).
    var trackedFlows: Int { state.flowCount }

    public mutating func next() throws -> CaptureRecord? {
        while true {
            if let record = state.queue.popFirst() { return record }
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
                torn = error.message
            }
            state.handle(batch)
            if atEnd || torn != nil {
                if let torn { state.warn(torn) }
                finished = true
                state.finish()
            }
        }
    }
}
