import Capture
import Vocabulary

/// `server.pong-missing` (server): no pong reached the client within the pong timeout of
/// its ping. A pong swallowed by an injected fault is reported as caused by it.
public struct ServerPongMissing: UnansweredPingRule {
    public static let id = "server.pong-missing"
    public static let severity = Severity.warning
    public static let party = Party.server
    public static let summary = "the server answers a ping within the pong timeout"
    let spec: LifecycleSpec
    var reportedPing: Evidence?
    public init(spec: LifecycleSpec) { self.spec = spec }

    func deadline(afterPingAt pingAt: Micros, in view: ConnectionTimes, stale: LifecycleSpec.StaleSpec) -> Micros? {
        let deadline = pingAt.addingSaturated(stale.pongTimeout)
        if let pong = view.pongSincePing, pong <= deadline { return nil }
        return deadline
    }

    func report(ping: Evidence, in view: ConnectionView, stale: LifecycleSpec.StaleSpec, now: Micros) -> (String, [Evidence]) {
        ("no pong \(formatSeconds(now - ping.t)) after the ping > pong timeout \(formatSeconds(stale.pongTimeout))", [ping])
    }

    /// The server did answer when a fault swallowed its pong: that fault explains the finding.
    func cause(in view: ConnectionView) -> String? { view.swallowedPongFault }
}
