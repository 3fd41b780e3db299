import Capture
import Vocabulary

/// The merge of a sharded pcap read: the shards' ledgers (`FlowLedger`) replayed in packet
/// order over the union of their flow tables, so that the records come out exactly as one
/// thread would have written them.
///
/// It renumbers connection ids (each shard numbers its own; the serial decoder numbers them
/// in the order connections are confirmed, which is this replay's order), counts the flow
/// inventory, and checks at every new flow and every confirmed connection whether the
/// serial decoder would have hit a global bound there: evicted an expired or surplus
/// dataless flow, refused a flow for a full table, or refused a connection over the cap.
/// No shard can take those decisions alone, so the merge reports the packet instead
/// (`diverged`), and the read goes on serially from the start (see `ShardedPcapDecoder`).
struct ShardMerge {
    let limits: PcapRecordSource.Limits
    /// TCP flows and their ports, counted in packet order (the port list is capped, so the
    /// order decides which ports are named).
    private(set) var inventory = TrafficInventory()
    private var flows = 0
    private var openConnections = 0
    private var nextID: ConnectionID = 1
    /// Each shard's ids of connections still in its table, to the merged ids.
    private var ids: [[ConnectionID: ConnectionID]]
    /// Flows without data yet, by first packet; `present` says which entries still stand.
    private var dataless: [(key: FlowKey, openedAt: Micros)] = []
    private var datalessHead = 0
    private var present: [FlowKey: Micros] = [:]

    init(shards: Int, limits: PcapRecordSource.Limits) {
        self.limits = limits
        ids = Array(repeating: [:], count: shards)
    }

    /// Replays one shard's event; false where the serial decoder would have decided
    /// differently from the shard.
    mutating func apply(_ event: FlowLedger.Event, shard: Int) -> Bool {
        switch event {
        case .creating(let t, let newIsDataless):
            // `DecoderState.makeRoom`, then its table check, on the global counts: any
            // eviction or refusal there is a decision the shard did not take.
            let share = newIsDataless ? max(1, limits.maxFlows / 2) : limits.maxFlows
            if let oldest = oldestDataless(),
               t - oldest >= DatalessFlows.expiry || present.count >= share || (!newIsDataless && flows >= limits.maxFlows) {
                return false
            }
            return flows < limits.maxFlows
        case .added(let key, let openedAt, let isDataless, let port):
            flows += 1
            inventory.countFlow(port: port)
            if isDataless {
                dataless.append((key, openedAt))
                present[key] = openedAt
            }
        case .gotData(let key):
            present[key] = nil
        case .removed(let key, let id, let wasDataless):
            flows -= 1
            if let id, ids[shard].removeValue(forKey: id) != nil { openConnections -= 1 }
            if wasDataless { present[key] = nil }
        case .confirmed(let id):
            guard openConnections < limits.maxConnections else { return false }
            openConnections += 1
            ids[shard][id] = nextID
            nextID += 1
        case .finishing:
            break
        }
        return true
    }

    /// The merged id of shard `shard`'s connection `id`.
    func id(_ id: ConnectionID, shard: Int) -> ConnectionID? { ids[shard][id] }

    /// The first packet time of the oldest flow still without data, dropping entries of
    /// flows since gone or given data (and, like `DatalessFlows.compact`, keeping the list
    /// within bounds when stale entries pile up behind a young front).
    private mutating func oldestDataless() -> Micros? {
        while datalessHead < dataless.count {
            let entry = dataless[datalessHead]
            if present[entry.key] == entry.openedAt { break }
            datalessHead += 1
        }
        if dataless.count - datalessHead > 2 * limits.maxFlows + 1024 {
            dataless = dataless[datalessHead...].filter { present[$0.key] == $0.openedAt }
            datalessHead = 0
        } else if datalessHead > 4096, datalessHead * 2 > dataless.count {
            dataless.removeFirst(datalessHead)
            datalessHead = 0
        }
        return datalessHead < dataless.count ? dataless[datalessHead].openedAt : nil
    }
}

extension CaptureRecord {
    /// The record with its connection id replaced (records that name none stay as they are).
    /// Taken apart by `switch consume`, so its parts move into the result, not copied.
    consuming func renumbered(_ id: ConnectionID) -> CaptureRecord {
        switch consume self {
        case .open(var r): r.conn = id; return .open(r)
        case .upgrade(var r): r.conn = id; return .upgrade(r)
        case .frame(var r): r.conn = id; return .frame(r)
        case .end(var r): r.conn = id; return .end(r)
        case .note(var r) where r.conn != nil: r.conn = id; return .note(r)
        case .fault(var r) where r.conn != nil: r.conn = id; return .fault(r)
        case .tunnel(var r): r.conn = id; return .tunnel(r)
        case .http(var r): r.conn = id; return .http(r)
        case let other: return other
        }
    }
}
