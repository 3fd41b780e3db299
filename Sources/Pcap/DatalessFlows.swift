import Vocabulary

/// The flows of a pcap that have carried no data yet (a SYN, a refused connection, a port
/// scan), oldest first, so `DecoderState` can expire them and evict them before they fill
/// the flow table: 100,001 SYN-only flows once took every slot and hid the real session
/// behind them. Entries are (key, first packet time); an entry whose flow has since gone,
/// been replaced or carried data is skipped when it reaches the front.
struct DatalessFlows {
    /// A flow that carried nothing within this long of its first packet is forgotten (a
    /// real connection sends its upgrade request right after the handshake).
    static let expiry: Micros = 60_000_000

    private var entries: [(key: FlowKey, openedAt: Micros)] = []
    private var head = 0
    /// Flows in the table that carried no data: what the table's share for them bounds.
    private(set) var count = 0

    /// A new flow whose first segment carried no data.
    mutating func added(key: FlowKey, openedAt: Micros) {
        entries.append((key, openedAt))
        count += 1
    }

    /// A counted flow carried its first data.
    mutating func gotData() { count -= 1 }

    /// A counted flow left the table.
    mutating func removed() { count -= 1 }

    /// The oldest flow still in `table` that has carried no data, skipping stale entries.
    mutating func oldest(in table: borrowing FlowTable<WebSocketConnection>) -> WebSocketConnection? {
        while head < entries.count {
            let entry = entries[head]
            if let flow = table[entry.key], !flow.carriedData, flow.openedAt == entry.openedAt { return flow }
            head += 1
        }
        return nil
    }

    /// Takes the entry `oldest` returned off the front.
    mutating func dropOldest() { head += 1 }

    /// Keeps the list within `bound` entries (stale ones pile up behind a young front) and
    /// gives back the space of the ones already passed.
    mutating func compact(keeping table: borrowing FlowTable<WebSocketConnection>, bound: Int) {
        if entries.count - head > bound {
            entries = entries[head...].filter { entry in
                guard let flow = table[entry.key] else { return false }
                return !flow.carriedData && flow.openedAt == entry.openedAt
            }
            head = 0
        } else if head > 4096, head * 2 > entries.count {
            entries.removeFirst(head)
            head = 0
        }
    }
}
