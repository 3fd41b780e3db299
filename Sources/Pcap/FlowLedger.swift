import Capture
import Vocabulary

/// What one shard of a sharded pcap read did, packet by packet: the records it decoded and,
/// between them in the order they happened, what its flow table did (a flow about to be
/// made, made, given data, removed; a connection given an id; a flow flushed at the end).
///
/// A shard sees only its own flows, but the serial decoder's bounds are global: the flow
/// cap, the share of dataless flows and their expiry, the connection cap, and the numbering
/// of connection ids. The merge replays these events in packet order over the union of the
/// shards (`ShardMerge`), renumbers the ids, and sees exactly where the serial decoder would
/// have made a decision that no shard could make alone.
final class FlowLedger {
    enum Event {
        /// A segment of an unknown flow is about to make one (the serial decoder first makes
        /// room: expired and surplus dataless flows go, and a full table refuses it).
        case creating(t: Micros, dataless: Bool)
        case added(key: FlowKey, openedAt: Micros, dataless: Bool, port: UInt16)
        case gotData(key: FlowKey)
        case removed(key: FlowKey, id: ConnectionID?, dataless: Bool)
        /// A connection was confirmed and asks for an id: the shard's next is `id` (the
        /// shard may refuse it for its own cap, in which case the global cap refuses too).
        case confirmed(id: ConnectionID)
        /// The end of the capture: the records that follow flush this flow.
        case finishing(FinishKey)
    }

    /// Where a flow's flush comes at the end of the capture: by id, then (those without
    /// one) by first packet and addresses, so the order does not depend on table slots.
    struct FinishKey {
        var id: ConnectionID?
        var openedAt: Micros
        var key: FlowKey
    }

    static func finishesBefore(_ a: FinishKey, _ b: FinishKey) -> Bool {
        let (x, y) = (a.id ?? .max, b.id ?? .max)
        if x != y { return x < y }
        if a.openedAt != b.openedAt { return a.openedAt < b.openedAt }
        return a.key.low != b.key.low ? a.key.low < b.key.low : a.key.high < b.key.high
    }

    enum Item {
        case record(CaptureRecord)
        case event(Event)
    }

    /// One packet's worth (or the end's) of items, tagged with the packet's number.
    struct Entry {
        var packet: Int
        var item: Item
    }

    private let queue: RecordQueue
    /// The number of the packet being decoded (`Int.max` for the end of the capture).
    @exclusivity(unchecked) var packet = 0
    @exclusivity(unchecked) private(set) var entries: [Entry] = []

    init(queue: RecordQueue) {
        self.queue = queue
    }

    func append(_ event: Event) {
        takeRecords()
        entries.append(Entry(packet: packet, item: .event(event)))
    }

    /// Moves the records decoded so far out of the shard's queue, after the events before them.
    func takeRecords() {
        while let record = queue.popFirst() { entries.append(Entry(packet: packet, item: .record(record))) }
    }

    /// Everything recorded since the last call, handed over.
    func takeEntries() -> [Entry] {
        takeRecords()
        defer { entries = []; entries.reserveCapacity(256) }
        return entries
    }
}
