import Capture
import Faults
import JSON
import Vocabulary

/// What the control API reads from and changes in a running proxy. The proxy server
/// implements it; the control API calls it only on the proxy's loop thread.
/// (Contract between the proxy shell and the control API: both may add members.)
protocol ControlTarget: AnyObject {
    /// The rules every connection consults; thread-safe on its own.
    var faultEngine: FaultEngine { get }
    /// One object per open connection: id, client, upstream, state, opened_at (seconds),
    /// frames and bytes each way, faults fired on it.
    func connectionSummaries() -> [JSONValue]
    /// Tells connection `id` (or every connection, for nil) that the rules changed, so an
    /// added or applied-now rule acts at once. False when no such connection is open.
    @discardableResult
    func faultsChanged(connection: ConnectionID?) -> Bool
    /// Counters for `GET /metrics`.
    func metrics() -> ProxyMetrics
    /// Events as JSON objects for `GET /events`, until `unwatch`; nil when at the limit.
    func watch(_ sink: @escaping (JSONValue) -> Void) -> Int?
    func unwatch(_ id: Int)
}

/// Counters the proxy keeps for the control API's Prometheus endpoint.
struct ProxyMetrics: Sendable {
    var connectionsOpen = 0
    var connectionsTotal = 0
    var framesClientToServer = 0
    var framesServerToClient = 0
    var bytesClientToServer = 0
    var bytesServerToClient = 0
    var framesDropped = 0
    var framesDelayed = 0
    var framesInjected = 0
}
