import Capture
import Vocabulary

extension StaleCloseMissing {
    /// Server timeout (SignalR): the finding for a client that heard no message from the
    /// server for the server timeout and kept the connection open past it + tolerance.
    func serverTimeoutMissed(_ view: ConnectionView, since: Evidence, deadline: Micros, _ context: RuleContext) -> Finding {
        let timeout = spec.stale?.pongTimeout ?? 0
        let what = view.lastMessageReceivedAt > (view.connectedAt ?? .max) ? "after the last one" : "since connecting"
        return finding(context, conn: view.conn, t: deadline,
                       "no message from the server for \(formatSeconds(deadline - since.t - spec.tolerances.timing)) \(what) and the connection still open > bound \(formatSeconds(deadline - since.t)) (server timeout \(formatSeconds(timeout)) + tolerance)",
                       evidence: [since])
    }
}
