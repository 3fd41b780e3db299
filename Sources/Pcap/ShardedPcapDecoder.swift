import Capture
import Vocabulary

/// `PcapRecordSource` with `jobs` above 1: TCP reassembly and WebSocket decoding spread over
/// worker threads by flow hash, the records handed out in exactly the order (and with the
/// ids) one thread would have given them.
///
/// The calling thread reads the packets, decodes their headers (`PacketTally`, the same
/// counts as the serial read) and deals them out in rounds of up to `roundPackets` packets
/// (or `roundBytes` of payload), each packet numbered, each flow's packets always to the
/// same shard (`PcapShard`). It keeps `depth` rounds in flight and merges each round's
/// ledgers back in packet order (`ShardMerge`): memory is bounded by the rounds in flight,
/// and a slow shard makes the reader wait, never lose packets.
///
/// Where the merge finds that the serial decoder would have hit a global bound (the flow
/// cap, the dataless share or expiry, the connection cap), the shards stop and the read
/// goes on serially: a new serial read of the file from its start, past the records
/// already handed out (they are the serial read's first ones), so caps, their warnings and
/// the error on dropped data are exactly the serial read's. Only regular files are read
/// this way (a pipe cannot be read twice).
final class ShardedPcapDecoder {
    static let roundPackets = 512
    static let roundBytes = 1 << 20
    static let depth = 4

    private let reader: PcapReader
    private var pendingPacket: PcapReader.Packet?
    private let limits: PcapRecordSource.Limits
    /// Opens the serial read that takes over after a divergence.
    private let reopen: () throws(PcapError) -> PcapRecordSource
    private var tally: PacketTally
    private var shards: [PcapShard]
    private var merge: ShardMerge
    private let out = RecordQueue()
    /// Records put in `out` so far: what the serial read skips after a divergence.
    private var handedOut = 0
    private var roundsInFlight = 0
    private var readDone = false
    private var finishSent = false
    private var merged = false
    /// Corruption in the middle of the file: thrown once the records before it are out.
    private var failure: PcapError?
    private var tornMessages: [String] = []
    private var serial: PcapRecordSource?
    private var started = false

    init(reader: PcapReader, first: PcapReader.Packet?, link: LinkType, startedAt: Int64, jobs: Int,
         limits: PcapRecordSource.Limits, initialWarnings: [String],
         reopen: @escaping () throws(PcapError) -> PcapRecordSource) {
        self.reader = reader
        pendingPacket = first
        self.limits = limits
        self.reopen = reopen
        tally = PacketTally(link: link, startedAt: startedAt)
        shards = (0..<jobs).map { _ in PcapShard(link: link, startedAt: startedAt, limits: limits, depth: Self.depth + 1) }
        merge = ShardMerge(shards: jobs, limits: limits)
        tornMessages = initialWarnings
    }

    deinit { stopShards() }

    /// The decoder's warnings before the reader's own (see `serialWarnings`).
    var warnings: [String] { tornMessages + tally.warnings }

    /// Whether the serial read took over (for tests).
    var wentSerial: Bool { serial != nil }

    /// After a divergence, every warning is the serial read's, the reader's included.
    var serialWarnings: [String]? { serial?.warnings }

    var inventory: TrafficInventory {
        if let serial { return serial.inventory }
        var inventory = merge.inventory
        inventory.packets = tally.packets
        inventory.tcpPackets = tally.tcpPackets
        return inventory
    }

    func next() throws -> CaptureRecord? {
        while true {
            if let record = out.popFirst() { return record }
            if serial != nil { return try serial!.next() }
            if merged {
                if let failure {
                    self.failure = nil
                    throw failure
                }
                return nil
            }
            if !started {
                started = true
                WorkerArenas.allow(jobs: shards.count)
                for shard in shards { shard.start() }
            }
            while roundsInFlight < Self.depth && !finishSent { dispatchRound() }
            if roundsInFlight == 0 {
                merged = true
                stopShards()
                continue
            }
            try mergeRound()
        }
    }

    // MARK: - Reading and dealing out

    private func dispatchRound() {
        var rounds = Array(repeating: ShardRound(), count: shards.count)
        var packets = 0, bytes = 0
        while !readDone && packets < Self.roundPackets && bytes < Self.roundBytes {
            let packet: PcapReader.Packet?
            if let pending = pendingPacket {
                pendingPacket = nil
                packet = pending
            } else {
                do {
                    packet = try reader.next()
                } catch {
                    // As the serial read: a torn tail keeps what was read; corruption with
                    // data after it ends the read with an error once the records are out.
                    if error.isTornTail { tornMessages.append(error.message) } else { failure = error }
                    readDone = true
                    break
                }
            }
            guard let packet else { readDone = true; break }
            packets += 1
            guard let (segment, t) = tally.decode(packet.bytes, time: packet.time) else { continue }
            let shard = Int(truncatingIfNeeded: UInt(bitPattern: FlowKey(segment.source, segment.destination).hashValue)
                            % UInt(shards.count))
            rounds[shard].append(segment, number: tally.packetIndex, t: t)
            bytes += segment.payload.count
        }
        if readDone {
            finishSent = true
            // A failed read is not flushed (the serial read does not flush it either).
            if failure == nil { for i in rounds.indices { rounds[i].finishAt = tally.lastTime } }
        }
        for (shard, round) in zip(shards, rounds) { shard.put(round) }
        roundsInFlight += 1
    }

    // MARK: - Merging

    private func mergeRound() throws {
        roundsInFlight -= 1
        var ledgers = shards.map { $0.take() }
        var heads = Array(repeating: 0, count: ledgers.count)
        var finishing: [(key: FlowLedger.FinishKey, shard: Int, entries: Range<Int>)] = []
        while true {
            // The shard holding the lowest packet number next (a packet is one shard's).
            var lowest = -1
            for i in ledgers.indices where heads[i] < ledgers[i].count {
                if lowest < 0 || ledgers[i][heads[i]].packet < ledgers[lowest][heads[lowest]].packet { lowest = i }
            }
            guard lowest >= 0 else { break }
            let packet = ledgers[lowest][heads[lowest]].packet
            if packet == Int.max {
                // The end: every shard's flushes, put in the serial read's order below.
                for i in ledgers.indices { finishing += Self.flushGroups(ledgers[i][heads[i]...], shard: i) }
                break
            }
            var end = heads[lowest]
            while end < ledgers[lowest].count && ledgers[lowest][end].packet == packet { end += 1 }
            guard take(heads[lowest] ..< end, of: &ledgers[lowest], shard: lowest) else { return try diverge() }
            heads[lowest] = end
        }
        guard !finishing.isEmpty else { return }
        // By merged id (the shards' ids are theirs), then first packet and addresses.
        let ordered = finishing.map { group -> (FlowLedger.FinishKey, Int, Range<Int>) in
            var key = group.key
            key.id = key.id.flatMap { merge.id($0, shard: group.shard) }
            return (key, group.shard, group.entries)
        }.sorted { FlowLedger.finishesBefore($0.0, $1.0) }
        for (_, shard, entries) in ordered {
            guard take(entries, of: &ledgers[shard], shard: shard) else { return try diverge() }
        }
    }

    /// A shard's end-of-capture entries cut into one group per flow flushed (as ranges of
    /// the shard's ledger).
    private static func flushGroups(_ entries: ArraySlice<FlowLedger.Entry>, shard: Int)
        -> [(key: FlowLedger.FinishKey, shard: Int, entries: Range<Int>)] {
        var groups: [(key: FlowLedger.FinishKey, shard: Int, entries: Range<Int>)] = []
        var start = entries.startIndex
        var key: FlowLedger.FinishKey?
        for i in entries.indices {
            guard case .event(.finishing(let next)) = entries[i].item else { continue }
            if let key { groups.append((key, shard, start ..< i)) }
            key = next
            start = i + 1
        }
        if let key { groups.append((key, shard, start ..< entries.endIndex)) }
        return groups
    }

    /// One packet's (or one flush's) entries of a shard's ledger through the merge; false
    /// at a divergence. Each record is moved out of the ledger (a placeholder event left in
    /// its place), not copied: a copy counted every reference in the record up here and
    /// down again when the round's ledgers were let go, on the thread all others wait on.
    private func take(_ range: Range<Int>, of ledger: inout [FlowLedger.Entry], shard: Int) -> Bool {
        for i in range {
            if case .event(let event) = ledger[i].item {
                guard merge.apply(event, shard: shard) else { return false }
                continue
            }
            var item = FlowLedger.Item.event(.confirmed(id: 0))
            swap(&item, &ledger[i].item)
            guard case .record(let record) = consume item else { continue }
            // Each use below `consume`s the record: a plain use copied it.
            guard let local = record.connection else {
                out.append(consume record)
                handedOut += 1
                continue
            }
            guard let id = merge.id(local, shard: shard) else { return false }
            out.append(id == local ? consume record : (consume record).renumbered(id))
            handedOut += 1
        }
        return true
    }

    /// The serial read takes over from the records handed out so far.
    private func diverge() throws {
        stopShards()
        var serial = try reopen()
        for _ in 0..<handedOut {
            guard try serial.next() != nil else { break }
        }
        self.serial = serial
    }

    private func stopShards() {
        for shard in shards { shard.close(abandon: true) }
        shards = []
    }
}
