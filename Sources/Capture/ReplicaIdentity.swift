import JSON

/// Which replica of a fleet wrote a capture: kept in the header's settings (additive, so
/// older readers ignore it and older captures simply have none). `proxy --replica NAME`
/// sets the name; the host name and listen address are written by every proxy.
extension CaptureHeader {
    /// The settings keys: `"replica"` (the name given), `"host"` (the machine's host name).
    public static let replicaKey = "replica"
    public static let hostKey = "host"

    /// The replica's name as given to `proxy --replica`; nil when none was given.
    public var replicaName: String? { settings[Self.replicaKey]?.stringValue }
    /// The host name of the machine that recorded, when the producer wrote it.
    public var hostName: String? { settings[Self.hostKey]?.stringValue }
    /// The listen address of the proxy that recorded ("127.0.0.1:8080"), when known.
    public var listenAddress: String? { settings["listen"]?.stringValue }
}
