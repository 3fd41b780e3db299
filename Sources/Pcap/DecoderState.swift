import Capture
import Vocabulary

/// The mutable decoding state behind `PcapRecordSource` (a class so the connections' id
/// callback can reach it): flows, connection ids, counters for warnings.
// The Pcap module's classes mark their stored properties `@exclusivity(unchecked)`: their
// hot paths mutate class-held state once per packet or frame, and each run-time access
// check (a thread-local access-set insert) was a fifth of `faultline frames`' instructions
// on pcap input. The attribute does per property what the `-enforce-exclusivity=unchecked`
// flag did for the module, without an unsafe flag in the manifest (FaultlineKit, which
// reads pcaps, stays usable as a versioned dependency). Each class is used from one thread.
final class DecoderState {
    /// Routes one direction's stream events to its connection.
    struct Sink: TCPStreamSink {
        // unowned(unsafe): a sink lives only for one call, while the flow table holds the
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
    @exclusivity(unchecked) private var flows = FlowTable<WebSocketConnection>()
    @exclusivity(unchecked) private var nextID: ConnectionID = 1
    /// Connections with an id whose flow is still tracked: what `maxConnections` bounds.
    @exclusivity(unchecked) private var openConnections = 0
    @exclusivity(unchecked) private var warningMessages: [String] = []
    /// Headers and counts of every packet read on this state's thread (the serial read; a
    /// shard's packets were looked at by the dispatcher's tally).
    @exclusivity(unchecked) private(set) var tally: PacketTally
    /// Set on a shard of a sharded read: what the flow table did, for the merge to check
    /// against the global bounds (see `FlowLedger`).
    @exclusivity(unchecked) var ledger: FlowLedger?
    @exclusivity(unchecked) private var flowLimitHit = false
    @exclusivity(unchecked) private var connectionLimitHit = false
    /// Segments with payload that found no room in the flow table, and connections the
    /// connection cap left undecoded: data the records do not hold (see `droppedData`).
    @exclusivity(unchecked) private var segmentsDropped = 0
    @exclusivity(unchecked) private var connectionsIgnored = 0
    /// Flows that have carried no data yet, oldest first (see `DatalessFlows`); entries of
    /// flows since gone or given data are skipped when met.
    @exclusivity(unchecked) private var dataless = DatalessFlows()
    /// TCP flows and their ports, for the message of a pcap without WebSocket.
    @exclusivity(unchecked) private var flowInventory = TrafficInventory()

    /// Packets, TCP flows and their ports, for the message of a pcap without WebSocket.
    var inventory: TrafficInventory {
        var inventory = flowInventory
        inventory.packets = tally.packets
        inventory.tcpPackets = tally.tcpPackets
        return inventory
    }

    init(link: LinkType, startedAt: Int64, limits: PcapRecordSource.Limits) {
        self.link = link
        self.startedAt = startedAt
        self.limits = limits
        tally = PacketTally(link: link, startedAt: startedAt)
    }

    func warn(_ message: String) { warningMessages.append(message) }

    var flowCount: Int { flows.count }

    func warningList() -> [String] {
        warningMessages + tally.warnings
    }

    /// The TCP segments of the batch being decoded, with their times, flow keys (and
    /// hashes) and flow-table slots.
    @exclusivity(unchecked) private var segments: [(segment: TCPSegment, t: Micros, probe: FlowProbe, slot: Int)] = []

    /// Decodes a batch of packets in order, after fetching their flows' state (see
    /// `PacketBatch`).
    func handle(_ batch: PacketBatch) {
        batch.bytes.withUnsafeBytes { arena in
            segments.removeAll(keepingCapacity: true)
            for entry in batch.entries {
                let bytes = UnsafeRawBufferPointer(rebasing: arena[entry.start ..< entry.start + entry.count])
                guard let (segment, t) = tally.decode(bytes, time: entry.time) else { continue }
                add(segment, t: t)
            }
            handleSegments { _ in }
        }
    }

    /// Queues a decoded segment for `handleSegments` (its bytes must stay valid until then).
    @inline(__always) func add(_ segment: TCPSegment, t: Micros) {
        let probe = flows.probe(FlowKey(segment.source, segment.destination))
        segments.append((segment, t, probe, flows.prefetchSlot(for: probe)))
    }

    /// Decodes the queued segments in order, after fetching their flows; `before(i)` runs
    /// as the `i`th is about to be decoded (a shard tags records with their packet).
    func handleSegments(before: (Int) -> Void) {
        for item in segments { flows.prefetchFlow(atSlot: item.slot) }
        for (i, item) in segments.enumerated() {
            before(i)
            handle(item.segment, t: item.t, probe: item.probe)
        }
        segments.removeAll(keepingCapacity: true)
    }

    private func handle(_ segment: TCPSegment, t: Micros, probe: FlowProbe) {
        let key = probe.key
        let index = segment.source == key.low ? 0 : 1
        var flow = flows[probe]
        if let existing = flow, segment.flags.contains(.syn), !segment.flags.contains(.ack),
           existing.isEnded(index) || existing.isIgnored {
            // The same addresses and ports reused by a new connection.
            existing.captureEnded(t: t)
            remove(key)
            flow = nil
        }
        if flow == nil {
            if segment.payload.isEmpty, segment.missing == 0, !segment.flags.contains(.syn) {
                return  // a bare ACK, FIN or RST of a connection we never saw: nothing to decode
            }
            let carriesData = !segment.payload.isEmpty || segment.missing > 0
            ledger?.append(.creating(t: t, dataless: !carriesData))
            makeRoom(forDataless: !carriesData, t: t)
            guard flows.count < limits.maxFlows else {
                if !flowLimitHit { flowLimitHit = true; warn("more than \(limits.maxFlows) TCP flows open at once: later flows ignored") }
                if carriesData { segmentsDropped += 1 }
                return
            }
            var connectionLimits = WebSocketConnection.Limits()
            connectionLimits.maxPayload = limits.maxPayload
            let connection = WebSocketConnection(key: key, openedAt: t, limits: connectionLimits, tcpLimits: limits.tcp,
                                                 queue: queue) { [unowned self] in
                self.assignID()
            }
            flows.insert(connection)
            connection.carriedData = carriesData
            if !carriesData { dataless.added(key: key, openedAt: t) }
            let port = TrafficInventory.port(of: segment)
            flowInventory.countFlow(port: port)
            ledger?.append(.added(key: key, openedAt: t, dataless: !carriesData, port: port))
            flow = connection
        }
        guard let connection = flow else { return }
        if !connection.carriedData, !segment.payload.isEmpty || segment.missing > 0 {
            connection.carriedData = true
            dataless.gotData()
            ledger?.append(.gotData(key: key))
        }
        if connection.isIgnored {
            // Not WebSocket: no reassembly (and no buffers) for it, only watch for its end.
            connection.releaseReassembly(limits: limits.tcp)
            let rst = segment.flags.contains(.rst)
            if rst || segment.flags.contains(.fin), connection.sawEnd(from: index, rst: rst) { remove(key) }
            return
        }
        if segment.flags.contains(.syn), !segment.flags.contains(.ack) { connection.sawSYN(from: index) }
        if segment.flags.contains(.ack) {
            var sink = Sink(connection: connection, index: 1 - index, midStream: connection.startedMidStream(1 - index))
            connection.withReassembler(1 - index) { $0.peerAcknowledged(segment.ack, t: t, into: &sink) }
        }
        if !connection.hasStarted(index), !segment.flags.contains(.syn), segment.payload.isEmpty,
           segment.missing == 0, !segment.flags.contains(.rst) {
            // A bare ACK tells nothing about where this direction's stream starts.
            return
        }
        let midStream = !connection.hasStarted(index) && !segment.flags.contains(.syn)
        var sink = Sink(connection: connection, index: index,
                        midStream: midStream || connection.startedMidStream(index))
        connection.withReassembler(index) { $0.receive(segment, t: t, into: &sink) }
        if connection.bothEnded { remove(key) }
    }

    /// Forgets a flow; its connection, if it had an id, no longer counts as open.
    private func remove(_ key: FlowKey) {
        guard let connection = flows.removeValue(forKey: key) else { return }
        if connection.id != nil { openConnections -= 1 }
        if !connection.carriedData { dataless.removed() }
        ledger?.append(.removed(key: key, id: connection.id, dataless: !connection.carriedData))
    }

    /// Before a new flow is added: forgets flows that carried no data within
    /// `DatalessFlows.expiry` of their first packet, and, while flows without data hold
    /// their share of the table (half, or all of it when a flow with data needs the room),
    /// the oldest of them. What a flood of SYNs takes is never the room of a real session.
    private func makeRoom(forDataless newIsDataless: Bool, t: Micros) {
        let share = newIsDataless ? max(1, limits.maxFlows / 2) : limits.maxFlows
        while let oldest = dataless.oldest(in: flows) {
            let expired = t - oldest.openedAt >= DatalessFlows.expiry
            guard expired || dataless.count >= share || (!newIsDataless && flows.count >= limits.maxFlows) else { break }
            dataless.dropOldest()
            remove(oldest.key)
        }
        dataless.compact(keeping: flows, bound: 2 * limits.maxFlows + 1024)
    }

    /// Why the records miss data a cap dropped, or nil: a read that lost data is not a
    /// complete one, so `PcapRecordSource` ends it with this error.
    func droppedData() -> String? {
        var parts: [String] = []
        if segmentsDropped > 0 {
            parts.append("more than \(limits.maxFlows) TCP flows carrying data open at once: \(segmentsDropped) segments carrying data of later flows were not decoded")
        }
        if connectionsIgnored > 0 {
            parts.append("more than \(limits.maxConnections) WebSocket connections open at once: \(connectionsIgnored) later connections were not decoded")
        }
        guard !parts.isEmpty else { return nil }
        return parts.joined(separator: "; ") + "; the records are incomplete (split the capture with --filter, e.g. by port)"
    }

    private func assignID() -> ConnectionID? {
        // Before the check: a shard's own count is below the global one, so the merge
        // must see the attempt to see the global cap refuse it.
        ledger?.append(.confirmed(id: nextID))
        guard openConnections < limits.maxConnections else {
            if !connectionLimitHit {
                connectionLimitHit = true
                warn("more than \(limits.maxConnections) WebSocket connections open at once: later ones ignored")
            }
            connectionsIgnored += 1
            return nil
        }
        openConnections += 1
        defer { nextID += 1 }
        return nextID
    }

    /// End of the capture at `t` (the last packet's time): flush every flow, then close
    /// what is still open.
    func finish(at t: Micros) {
        // By id, and those without one by their first packet, then addresses: an order
        // that does not hang on the table's slots, so a sharded read can rebuild it.
        for connection in flows.values.sorted(by: { FlowLedger.finishesBefore($0.finishKey, $1.finishKey) }) {
            ledger?.append(.finishing(connection.finishKey))
            for index in 0..<2 {
                var sink = Sink(connection: connection, index: index, midStream: connection.startedMidStream(index))
                connection.withReassembler(index) { $0.finish(t: t, into: &sink) }
            }
            connection.captureEnded(t: t)
        }
        flows.removeAll()
        dataless = DatalessFlows()
    }
}
