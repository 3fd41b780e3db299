/// A list that keeps its first `head` and last `tail` elements and counts the ones in
/// between, so a report over a capture of any size holds a bounded amount per client while
/// still showing how each client's story began and how it ended. Below `head + tail`
/// elements nothing is dropped: reports of normal-size inputs are unchanged.
///
/// A report keeps five of these per client, and a capture may hold hundreds of thousands
/// of clients with a few elements each: the limits are the report's (`ReportLimits`,
/// given to `append`), not stored per list, and the newest-elements ring exists only once
/// the head is full. An unfilled log is its head array and an empty reference, 16 bytes.
public struct BoundedLog<Element: Sendable>: Sendable {
    /// The first elements, up to the head limit: for most clients all of them.
    private var head: [Element] = []
    /// Allocated when the head is full: the ring of the newest elements and the count
    /// dropped between. Copied before a change when shared (the log is a value).
    private var overflow: Overflow?

    private final class Overflow: @unchecked Sendable {
        // Changed only through `BoundedLog.append`, after a uniqueness check.
        var tail: [Element] = []
        /// The oldest element's slot in `tail` once the ring is full.
        var start = 0
        var omitted = 0

        func copy() -> Overflow {
            let copy = Overflow()
            copy.tail = tail
            copy.start = start
            copy.omitted = omitted
            return copy
        }
    }

    public init() {}

    /// Elements dropped from the middle.
    public var omitted: Int { overflow?.omitted ?? 0 }

    /// Every element ever appended, kept or not.
    public var total: Int { head.count + (overflow.map { $0.tail.count + $0.omitted } ?? 0) }

    public mutating func append(_ element: Element, limits: ReportLimits) {
        if head.count < limits.head {
            head.append(element)
            if head.count == limits.head { Self.fit(&head) }
            return
        }
        if overflow == nil {
            overflow = Overflow()
        } else if !isKnownUniquelyReferenced(&overflow!) {
            overflow = overflow!.copy()
        }
        guard let ring = overflow else { return }
        guard limits.tail > 0 else { ring.omitted += 1; return }
        if ring.tail.count < limits.tail {
            ring.tail.append(element)
            if ring.tail.count == limits.tail { Self.fit(&ring.tail) }
            return
        }
        ring.tail[ring.start] = element
        ring.start = (ring.start + 1) % ring.tail.count
        ring.omitted += 1
    }

    /// Changes every kept element in place (the builder renumbering names when it merges
    /// shards' logs).
    mutating func updateEach(_ change: (inout Element) -> Void) {
        for i in head.indices { change(&head[i]) }
        guard overflow != nil else { return }
        if !isKnownUniquelyReferenced(&overflow!) { overflow = overflow!.copy() }
        guard let ring = overflow else { return }
        for i in ring.tail.indices { change(&ring.tail[i]) }
    }

    /// A full list moved to an array of its size: grown by doubling, 20 elements sit in
    /// room for 32, and at 2,000 clients with every list full (a long capture) that slack
    /// was some 8 MB of the report's logs. Done once per list, when it fills.
    private static func fit(_ list: inout [Element]) {
        guard list.capacity > list.count else { return }
        var fitted: [Element] = []
        fitted.reserveCapacity(list.count)
        fitted.append(contentsOf: list)
        list = fitted
    }

    /// How many elements the log has room for without growing (for tests).
    var room: Int { head.capacity + (overflow?.tail.capacity ?? 0) }

    /// The kept elements in the order appended (the omitted ones sat between head and
    /// tail). With nothing dropped this is the head array itself, shared, not copied.
    public var elements: [Element] {
        guard let ring = overflow, !ring.tail.isEmpty else { return head }
        return head + ring.tail[ring.start...] + ring.tail[..<ring.start]
    }
}
