import Capture
import Faults
import JSON
import Vocabulary

/// What the control API reads from and changes in a running proxy. The executable adapts
/// its `ControlTarget` (the proxy server) to this; tests use a fake. Called only on the
/// loop thread the `ControlServer` runs on.
public protocol ControlBackend: AnyObject {
    /// The rules every connection consults (thread-safe on its own).
    var faultEngine: FaultEngine { get }
    /// One JSON object per open connection (at least `id`, an integer).
    func connectionSummaries() -> [JSONValue]
    /// Tells connection `id` (or every connection, for nil) that the rules changed, so an
    /// added or applied-now rule acts at once. False when no such connection is open.
    @discardableResult
    func faultsChanged(connection: ConnectionID?) -> Bool
    /// Counters for `GET /metrics` (faults fired come from `faultEngine`).
    func metrics() -> ControlMetrics
    /// Starts sending events (one JSON object each: connection opened or ended, fault fired,
    /// finding) to `sink` as they happen, on the loop thread; returns an id for `unwatch`,
    /// or nil when this backend has no events (`GET /events` answers 501 then).
    func watch(_ sink: @escaping (JSONValue) -> Void) -> Int?
    func unwatch(_ id: Int)
}

extension ControlBackend {
    public func watch(_ sink: @escaping (JSONValue) -> Void) -> Int? { nil }
    public func unwatch(_ id: Int) {}
}

/// The proxy's counters as `GET /metrics` shows them.
public struct ControlMetrics: Sendable, Hashable {
    public var connectionsOpen = 0
    public var connectionsTotal = 0
    public var framesClientToServer = 0
    public var framesServerToClient = 0
    public var bytesClientToServer = 0
    public var bytesServerToClient = 0
    public var framesDropped = 0
    public var framesDelayed = 0
    public var framesInjected = 0

    public init() {}
}
