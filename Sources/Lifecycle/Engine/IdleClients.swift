import Vocabulary

/// The idle clients of one grouping key (those holding no connection), the one a new
/// connection joins on top: the most recently active, the first client of equals.
///
/// A binary heap of (last activity, client) whose entries go stale rather than being
/// looked for: when a client takes a connection, or is active again while idle (a late
/// frame on the connection it closed), it is simply pushed anew. The owner says which
/// entries are current; stale ones are dropped when they reach the top, and all at once
/// when they outnumber the idle clients, so the heap stays within twice their number.
/// Searching a key's list of clients instead made a capture of many overlapping
/// connections of one key quadratic (80,000 of them took 13 s, 200,000 minutes).
struct IdleClients: Sendable {
    struct Entry: Sendable, Equatable {
        var lastActivity: Micros
        var client: Int

        /// Heap order: later activity first, then the lower (earlier) client.
        func outranks(_ other: Entry) -> Bool {
            lastActivity != other.lastActivity ? lastActivity > other.lastActivity : client < other.client
        }
    }

    private var heap: [Entry] = []
    /// How many of this key's clients are idle now (the owner's count, for compaction).
    private(set) var idleCount = 0

    var isEmpty: Bool { idleCount == 0 }

    /// A client became idle, at its last activity.
    mutating func becameIdle(_ entry: Entry, isCurrent: (Entry) -> Bool) {
        idleCount += 1
        push(entry, isCurrent: isCurrent)
    }

    /// An idle client was active again: its new entry (the old one is stale now).
    mutating func touched(_ entry: Entry, isCurrent: (Entry) -> Bool) {
        push(entry, isCurrent: isCurrent)
    }

    /// An idle client took a connection.
    mutating func becameBusy() {
        idleCount = max(0, idleCount - 1)
        if idleCount == 0 { heap.removeAll(keepingCapacity: false) }
    }

    /// The idle client to join, stale entries above it dropped on the way.
    mutating func best(isCurrent: (Entry) -> Bool) -> Int? {
        while let top = heap.first, !isCurrent(top) { popTop() }
        return heap.first?.client
    }

    private mutating func push(_ entry: Entry, isCurrent: (Entry) -> Bool) {
        heap.append(entry)
        siftUp(heap.count - 1)
        if heap.count > 2 * idleCount + 16 { compact(isCurrent: isCurrent) }
    }

    /// Keeps the current entries only, one per client, and restores the heap order.
    private mutating func compact(isCurrent: (Entry) -> Bool) {
        var seen: Set<Int> = []
        heap = heap.filter { isCurrent($0) && seen.insert($0.client).inserted }
        for i in stride(from: heap.count / 2 - 1, through: 0, by: -1) { siftDown(i) }
    }

    private mutating func popTop() {
        heap.swapAt(0, heap.count - 1)
        heap.removeLast()
        if !heap.isEmpty { siftDown(0) }
    }

    private mutating func siftUp(_ start: Int) {
        var child = start
        while child > 0 {
            let parent = (child - 1) / 2
            guard heap[child].outranks(heap[parent]) else { return }
            heap.swapAt(child, parent)
            child = parent
        }
    }

    private mutating func siftDown(_ start: Int) {
        var parent = start
        while true {
            var top = parent
            let left = 2 * parent + 1, right = left + 1
            if left < heap.count, heap[left].outranks(heap[top]) { top = left }
            if right < heap.count, heap[right].outranks(heap[top]) { top = right }
            if top == parent { return }
            heap.swapAt(parent, top)
            parent = top
        }
    }
}
