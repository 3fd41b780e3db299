import Capture
import Faults
import ProxyCore
import JSON
import Vocabulary

/// What the control API reads from and changes in a running proxy: the one contract between
/// the proxy (ProxyShell's `ProxyServer` implements it) and the control API; tests use a
/// fake. Called only on the loop thread the `ControlServer` runs on.
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
    /// Where `/intercept` pauses connections and decides on held messages; nil: no intercept.
    var interceptDesk: InterceptDesk? { get }
}

extension ControlBackend {
    public func watch(_ sink: @escaping (JSONValue) -> Void) -> Int? { nil }
    public func unwatch(_ id: Int) {}
    public var interceptDesk: InterceptDesk? { nil }
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
    /// `proxy --replica NAME`: put on every sample as the `replica` label, so one
    /// dashboard tells a fleet's replicas apart; nil for no label.
    public var replica: String?

    public init() {}
}

extension ControlMetrics {
    /// Counts one record: connection opens and ends, frames and bytes by direction and fate.
    public mutating func observe(_ record: CaptureRecord) {
        guard case .frame(let frame) = record else { return }
        switch frame.action {
        case .forwarded, .delayed:
            if frame.from == .client {
                framesClientToServer += 1
                bytesClientToServer += frame.length
            } else {
                framesServerToClient += 1
                bytesServerToClient += frame.length
            }
            if case .delayed = frame.action { framesDelayed += 1 }
        case .dropped: framesDropped += 1
        case .injected: framesInjected += 1
        case .observed: break
        }
    }
}
