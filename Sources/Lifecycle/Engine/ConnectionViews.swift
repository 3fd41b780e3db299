import Capture
import Vocabulary

/// A client's views of its latest connections (`ConnectionView`), in the order they
/// opened: a handful at most (`ClientTimeline` forgets older ones), so a short array
/// searched from the newest beats a dictionary, and a view is changed where it lies
/// (`subscript(at:)`), never copied out of a map and written back on every record.
public struct ConnectionViews: Sendable {
    private var views: [ConnectionView] = []

    public init() {}

    /// The view of `conn`, if the client still keeps it.
    public subscript(conn: ConnectionID) -> ConnectionView? {
        index(of: conn).map { views[$0] }
    }

    /// Where the view of `conn` lies, for changing it in place.
    func index(of conn: ConnectionID) -> Int? {
        var i = views.count
        while i > 0 {
            i -= 1
            if views[i].conn == conn { return i }
        }
        return nil
    }

    /// The view at `index` (from `index(of:)`), read and changed in place: reading one
    /// field does not copy the whole view (some 500 bytes) out first.
    subscript(at index: Int) -> ConnectionView {
        _read { yield views[index] }
        _modify { yield &views[index] }
    }

    /// Keeps `view` as its connection's: in place of an older view of the same id (a
    /// capture may reuse one), else after the others.
    /// Grown one view at a time: the timeline adds a fifth view before dropping the oldest,
    /// and grown by doubling that fifth took room for eight (4 KB a client, kept).
    mutating func set(_ view: ConnectionView) {
        if let i = index(of: view.conn) { views[i] = view; return }
        if views.count == views.capacity { views.reserveCapacity(views.count + 1) }
        views.append(view)
    }

    mutating func remove(_ conn: ConnectionID) {
        if let i = index(of: conn) { views.remove(at: i) }
    }

    public var isEmpty: Bool { views.isEmpty }
}

/// The times of one connection's view, and nothing that is counted by reference: what the
/// timer rules' `quietUntil` reads on every walk of a client's timers. A view is some 500
/// bytes with a dozen strings; handed whole to the functions that place a deadline, it was
/// copied out with all its references retained and released, on every ask (about a third
/// of each ask's cost in the profile). This is read field by field where the view lies.
public struct ConnectionTimes: Sendable, Hashable {
    public var conn: ConnectionID
    public var openedAt: Micros
    public var connectedAt: Micros?
    public var droppedAt: Micros?
    public var lastReceivedAt: Micros
    public var lastMessageSentAt: Micros
    public var activityTimeout: Micros
    /// `t` of the view's evidence of the same name.
    public var lastPing: Micros?
    public var receivedSincePing: Micros?
    public var pongSincePing: Micros?
    public var clientClose: Micros?

    @inline(__always)
    public init(_ view: borrowing ConnectionView) {
        conn = view.conn
        openedAt = view.openedAt
        connectedAt = view.connectedAt
        droppedAt = view.droppedAt
        lastReceivedAt = view.lastReceivedAt
        lastMessageSentAt = view.lastMessageSentAt
        activityTimeout = view.activityTimeout
        lastPing = view.lastPing?.t
        receivedSincePing = view.receivedSincePing?.t
        pongSincePing = view.pongSincePing?.t
        clientClose = view.clientClose?.t
    }
}

extension RuleContext {
    /// The times of the client's newest connection (`ConnectionTimes`); nil without one.
    /// Inlined into the timer rules' asks (three a walk of a client's timers): as a call,
    /// its 150-byte result was copied twice on the way out.
    @inline(__always)
    public var currentTimes: ConnectionTimes? {
        guard let current, let i = connections.index(of: current) else { return nil }
        return ConnectionTimes(connections[at: i])
    }
}
