/// A list that keeps its first `head` and last `tail` elements and counts the ones in
/// between, so a report over a capture of any size holds a bounded amount per client while
/// still showing how each client's story began and how it ended. Below `head + tail`
/// elements nothing is dropped: reports of normal-size inputs are unchanged.
public struct BoundedLog<Element: Sendable>: Sendable {
    public let headLimit: Int
    public let tailLimit: Int
    private var head: [Element] = []
    /// A ring of the newest elements once `head` is full; `start` is the oldest one's slot.
    private var tail: [Element] = []
    private var start = 0
    /// Elements dropped from the middle.
    public private(set) var omitted = 0

    public init(head: Int, tail: Int) {
        headLimit = max(0, head)
        tailLimit = max(0, tail)
    }

    /// Every element ever appended, kept or not.
    public var total: Int { head.count + tail.count + omitted }

    public mutating func append(_ element: Element) {
        if head.count < headLimit { head.append(element); return }
        if tailLimit == 0 { omitted += 1; return }
        if tail.count < tailLimit { tail.append(element); return }
        tail[start] = element
        start = (start + 1) % tailLimit
        omitted += 1
    }

    /// The kept elements in the order appended (the omitted ones sat between head and tail).
    public var elements: [Element] {
        head + tail[start...] + tail[..<start]
    }

    /// The newest element.
    public var last: Element? {
        tail.isEmpty ? head.last : tail[(start + tail.count - 1) % tail.count]
    }
}
