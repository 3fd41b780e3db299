/// Which peer of a proxied pair: the client that connected to us, or the upstream server.
public enum Side: String, Sendable, Hashable, CaseIterable {
    case client
    case server

    public var other: Side { self == .client ? .server : .client }
}
