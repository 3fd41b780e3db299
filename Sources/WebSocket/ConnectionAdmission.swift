/// Who gets a connection slot, for servers whose clients first send a request head (the
/// proxy's WebSocket upgrade, the control API's HTTP request): pure, so it is tested
/// without sockets.
///
/// Connections still waiting for their request ("pending") cost the attacker nothing to
/// hold open, so they must not be able to use up the slots of established ones. As in
/// nginx's and HAProxy's handling of idle connections under load: pending connections have
/// their own, smaller bound, and when a new client arrives with every slot taken, the oldest
/// pending connection is closed to make room (it has had the longest to send its request).
/// Only when every open connection is established is a new one refused.
public struct ConnectionAdmission: Sendable, Hashable {
    /// Open connections at most, pending and established together.
    public var maxConnections: Int
    /// Pending connections at most (at most `maxConnections`).
    public var maxPending: Int

    public init(maxConnections: Int, maxPending: Int) {
        self.maxConnections = max(1, maxConnections)
        self.maxPending = max(1, min(maxPending, self.maxConnections))
    }

    public enum Decision: Sendable, Hashable {
        /// Take it.
        case admit
        /// Close the oldest pending connection, then take this one.
        case admitEvictingOldestPending
        /// Every slot holds an established connection: turn it away.
        case refuse
    }

    /// What to do with a new connection, given how many are open and how many of those are pending.
    public func decide(open: Int, pending: Int) -> Decision {
        if pending >= maxPending { return .admitEvictingOldestPending }
        if open >= maxConnections { return pending > 0 ? .admitEvictingOldestPending : .refuse }
        return .admit
    }
}
