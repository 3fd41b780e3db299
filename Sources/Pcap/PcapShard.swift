import Capture
import Foundation
import Vocabulary

/// The packets of one round of a sharded read that belong to one shard: their TCP headers
/// as the dispatcher decoded them and their payloads copied into one arena.
struct ShardRound: @unchecked Sendable {
    struct Packet {
        var number: Int
        var t: Micros
        var source: Endpoint
        var destination: Endpoint
        var seq: UInt32
        var ack: UInt32
        var flags: TCPSegment.Flags
        var start: Int
        var count: Int
        var missing: Int
    }

    var arena: [UInt8] = []
    var packets: [Packet] = []
    /// Set on the last round: the capture ended at this time (flush every flow).
    var finishAt: Micros?

    mutating func append(_ segment: TCPSegment, number: Int, t: Micros) {
        packets.append(Packet(number: number, t: t, source: segment.source, destination: segment.destination,
                              seq: segment.seq, ack: segment.ack, flags: segment.flags, start: arena.count,
                              count: segment.payload.count, missing: segment.missing))
        if !segment.payload.isEmpty {
            segment.payload.withMemoryRebound(to: UInt8.self) { arena.append(contentsOf: $0) }
        }
    }
}

/// One worker of a sharded pcap read: a thread with its own `DecoderState` (flow table,
/// reassembly, WebSocket decoding) for the flows whose key hashes to it, fed rounds of
/// packets and giving back, per round, its ledger of records and flow events. Both
/// queues are bounded by the number of rounds the reader keeps in flight; `put` and `take`
/// wait rather than drop. The state is touched by the worker thread only.
final class PcapShard: @unchecked Sendable {
    private let state: DecoderState
    private let ledger: FlowLedger
    private let depth: Int
    private let condition = NSCondition()
    private var inbox: [ShardRound] = []
    private var outbox: [[FlowLedger.Entry]] = []
    private var closed = false
    private var done = false

    init(link: LinkType, startedAt: Int64, limits: PcapRecordSource.Limits, depth: Int) {
        state = DecoderState(link: link, startedAt: startedAt, limits: limits)
        ledger = FlowLedger(queue: state.queue)
        state.ledger = ledger
        self.depth = depth
    }

    func start() {
        let thread = Thread { [self] in run() }
        thread.stackSize = 8 << 20
        thread.start()
    }

    /// Hands the shard a round, waiting while `depth` rounds are queued.
    func put(_ round: ShardRound) {
        condition.lock()
        while inbox.count >= depth && !closed { condition.wait() }
        inbox.append(round)
        condition.broadcast()
        condition.unlock()
    }

    /// The next round's ledger, waiting for it.
    func take() -> [FlowLedger.Entry] {
        condition.lock()
        defer { condition.unlock() }
        while outbox.isEmpty && !done { condition.wait() }
        guard !outbox.isEmpty else { return [] }
        let entries = outbox.removeFirst()
        condition.broadcast()
        return entries
    }

    /// No more rounds: the thread ends once it has decoded what it holds (or at once, with
    /// `abandon`, when the read stopped early).
    func close(abandon: Bool = false) {
        condition.lock()
        closed = true
        if abandon { inbox.removeAll() }
        condition.broadcast()
        condition.unlock()
    }

    private func nextRound() -> ShardRound? {
        condition.lock()
        defer { condition.unlock() }
        while inbox.isEmpty && !closed { condition.wait() }
        guard !inbox.isEmpty else { return nil }
        let round = inbox.removeFirst()
        condition.broadcast()
        return round
    }

    private func run() {
        while let round = nextRound() {
            let entries = decode(round)
            condition.lock()
            outbox.append(entries)
            condition.broadcast()
            condition.unlock()
        }
        condition.lock()
        done = true
        condition.broadcast()
        condition.unlock()
    }

    private func decode(_ round: ShardRound) -> [FlowLedger.Entry] {
        round.arena.withUnsafeBytes { arena in
            // In batches of the serial decoder's size: fetched together, decoded in order.
            var first = 0
            while first < round.packets.count {
                let end = min(first + PacketBatch.capacity, round.packets.count)
                for p in round.packets[first ..< end] {
                    let payload = p.count == 0 ? UnsafeRawBufferPointer(start: nil, count: 0)
                        : UnsafeRawBufferPointer(rebasing: arena[p.start ..< p.start + p.count])
                    state.add(TCPSegment(source: p.source, destination: p.destination, seq: p.seq, ack: p.ack,
                                         flags: p.flags, payload: payload, missing: p.missing), t: p.t)
                }
                state.handleSegments { i in
                    ledger.takeRecords()
                    ledger.packet = round.packets[first + i].number
                }
                first = end
            }
        }
        if let t = round.finishAt {
            ledger.takeRecords()
            ledger.packet = Int.max
            state.finish(at: t)
        }
        return ledger.takeEntries()
    }
}
