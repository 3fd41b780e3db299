import Capture

/// The mutable decoding state behind `PcapRecordSource` (a class so the connections' id
/// callback can reach it): flows, connection ids, counters for warnings.
final class DecoderState {
    final class Flow: FlowTableEntry {
        let key: FlowKey
        /// One reassembler per direction, stored inline: an array of two kept them in a
        /// separate heap buffer, one more cold cache line per packet with thousands of
        /// flows open (and an accessor that yields either one cost a coroutine per use).
        var lowReassembler: TCPReassembler
        var highReassembler: TCPReassembler
        let connection: WebSocketConnection
        /// The connection is not WebSocket and its reassembly buffers were dropped.
        var released = false
        var lowFinSeen = false
        var highFinSeen = false
        init(key: FlowKey, limits: TCPReassembler.Limits, connection: WebSocketConnection) {
            self.key = key
            lowReassembler = TCPReassembler(limits: limits)
            highReassembler = TCPReassembler(limits: limits)
            self.connection = connection
        }

        /// Direction `index`'s reassembler (0: from the key's low endpoint), in place: a
        /// read through a returned copy would retain and release its buffers.
        @inline(__always) func withReassembler<R>(_ index: Int, _ body: (inout TCPReassembler) -> R) -> R {
            index == 0 ? body(&lowReassembler) : body(&highReassembler)
        }
    }

    /// Routes one direction's stream events to its connection.
    struct Sink: TCPStreamSink {
        // unowned(unsafe): a sink lives only for one call, while its flow holds the
        // connection; a checked `unowned` cost a strong-retain check per packet.
        unowned(unsafe) let connection: WebSocketConnection
        let index: Int
        let midStream: Bool
        mutating func streamData(_ bytes: UnsafeRawBufferPointer, t: Micros) {
            connection.data(bytes, from: index, midStream: midStream, t: t)
        }
        mutating func streamGap(count: Int64, reason: TCPGapReason, t: Micros) {
            connection.gap(count, reason: reason, from: index, t: t)
        }
        mutating func streamConflict(offset: Int64, count: Int, t: Micros) {
            connection.conflict(offset: offset, count: count, from: index, t: t)
        }
        mutating func streamEnd(_ kind: EndKind, t: Micros) {
            connection.end(kind, from: index, t: t)
        }
    }

    let link: LinkType
    let startedAt: Int64
    let limits: PcapRecordSource.Limits
    let queue = RecordQueue()
    private var flows = FlowTable<Flow>()
    private var nextID: ConnectionID = 1
    /// Connections with an id whose flow is still tracked: what `maxConnections` bounds.
    private var openConnections = 0
    private var lastTime: Micros = 0
    private var warningMessages: [String] = []
    private var fragments = 0
    private var malformed = 0
    private var firstMalformed: String?
    private var truncatedPackets = 0
    private var flowLimitHit = false
    private var connectionLimitHit = false
    private var packetIndex = 0

    init(link: LinkType, startedAt: Int64, limits: PcapRecordSource.Limits) {
        self.link = link
        self.startedAt = startedAt
        self.limits = limits
    }

    func warn(_ message: String) { warningMessages.append(message) }

    var flowCount: Int { flows.count }

    func warningList() -> [String] {
        var list = warningMessages
        if fragments > 0 { list.append("\(fragments) IP fragments ignored (IP reassembly is not supported)") }
        if malformed > 0 { list.append("\(malformed) malformed packets skipped (first: \(firstMalformed ?? ""))") }
        if truncatedPackets > 0 { list.append("\(truncatedPackets) TCP packets cut by the snapshot length") }
        return list
    }

    func handle(_ packet: PcapReader.Packet) {
        packetIndex += 1
        let t = max(packet.time - startedAt, lastTime)
        lastTime = t
        switch PacketDecoder.decode(packet.bytes, link: link) {
        case .notTCP:
            return
        case .fragment:
            fragments += 1
        case .malformed(let reason):
            malformed += 1
            if firstMalformed == nil { firstMalformed = "packet \(packetIndex): \(reason)" }
        case .tcp(let segment):
            if segment.missing > 0 { truncatedPackets += 1 }
            handle(segment, t: t)
        }
    }

    private func handle(_ segment: TCPSegment, t: Micros) {
        let key = FlowKey(segment.source, segment.destination)
        let index = segment.source == key.low ? 0 : 1
        var flow = flows[key]
        if let existing = flow, segment.flags.contains(.syn), !segment.flags.contains(.ack),
           existing.withReassembler(index, { $0.isEnded }) || existing.connection.isIgnored {
            // The same addresses and ports reused by a new connection.
            existing.connection.captureEnded(t: t)
            remove(key)
            flow = nil
        }
        if flow == nil {
            if segment.payload.isEmpty, segment.missing == 0, !segment.flags.contains(.syn) {
                return  // a bare ACK, FIN or RST of a connection we never saw: nothing to decode
            }
            guard flows.count < limits.maxFlows else {
                if !flowLimitHit { flowLimitHit = true; warn("more than \(limits.maxFlows) TCP flows open at once: later flows ignored") }
                return
            }
            var connectionLimits = WebSocketConnection.Limits()
            connectionLimits.maxPayload = limits.maxPayload
            let connection = WebSocketConnection(key: key, openedAt: t, limits: connectionLimits, queue: queue) { [unowned self] in
                self.assignID()
            }
            let added = Flow(key: key, limits: limits.tcp, connection: connection)
            flows.insert(added)
            flow = added
        }
        guard let flow else { return }
        let connection = flow.connection
        if connection.isIgnored {
            // Not WebSocket: no reassembly (and no buffers) for it, only watch for its end.
            if !flow.released {
                flow.released = true
                flow.lowReassembler = TCPReassembler(limits: limits.tcp)
                flow.highReassembler = TCPReassembler(limits: limits.tcp)
            }
            if segment.flags.contains(.rst) { flow.lowFinSeen = true; flow.highFinSeen = true }
            if segment.flags.contains(.fin) { if index == 0 { flow.lowFinSeen = true } else { flow.highFinSeen = true } }
            if flow.lowFinSeen && flow.highFinSeen { remove(key) }
            return
        }
        if segment.flags.contains(.syn), !segment.flags.contains(.ack) { connection.sawSYN(from: index) }
        if segment.flags.contains(.ack) {
            var sink = Sink(connection: connection, index: 1 - index, midStream: flow.withReassembler(1 - index) { $0.startedMidStream })
            flow.withReassembler(1 - index) { $0.peerAcknowledged(segment.ack, t: t, into: &sink) }
        }
        if !flow.withReassembler(index, { $0.hasStarted }), !segment.flags.contains(.syn), segment.payload.isEmpty,
           segment.missing == 0, !segment.flags.contains(.rst) {
            // A bare ACK tells nothing about where this direction's stream starts.
            return
        }
        let midStream = !flow.withReassembler(index) { $0.hasStarted } && !segment.flags.contains(.syn)
        var sink = Sink(connection: connection, index: index,
                        midStream: midStream || flow.withReassembler(index) { $0.startedMidStream })
        flow.withReassembler(index) { $0.receive(segment, t: t, into: &sink) }
        if connection.bothEnded { remove(key) }
    }

    /// Forgets a flow; its connection, if it had an id, no longer counts as open.
    private func remove(_ key: FlowKey) {
        if let flow = flows.removeValue(forKey: key), flow.connection.id != nil { openConnections -= 1 }
    }

    private func assignID() -> ConnectionID? {
        guard openConnections < limits.maxConnections else {
            if !connectionLimitHit {
                connectionLimitHit = true
                warn("more than \(limits.maxConnections) WebSocket connections open at once: later ones ignored")
            }
            return nil
        }
        openConnections += 1
        defer { nextID += 1 }
        return nextID
    }

    /// End of the capture: flush every flow, then close what is still open.
    func finish() {
        let t = lastTime
        for flow in flows.values.sorted(by: { ($0.connection.id ?? .max) < ($1.connection.id ?? .max) }) {
            for index in 0..<2 {
                var sink = Sink(connection: flow.connection, index: index, midStream: flow.withReassembler(index) { $0.startedMidStream })
                flow.withReassembler(index) { $0.finish(t: t, into: &sink) }
            }
            flow.connection.captureEnded(t: t)
        }
        flows.removeAll()
    }
}
