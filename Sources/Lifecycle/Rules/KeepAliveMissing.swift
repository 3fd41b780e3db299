import Capture
import Vocabulary

extension StalePingMissing {
    /// Server timeout (SignalR): the client owes a message every keep-alive interval, a
    /// ping when it had nothing else to send, since the server gives up a client it hears
    /// nothing from. Any data frame it sends counts, so an application's own traffic
    /// excuses the ping. A late message is seen passing its deadline before it arrives,
    /// since time advances before each record is handled.
    mutating func keepAliveMissing(at now: Micros, _ view: ConnectionView, _ stale: LifecycleSpec.StaleSpec,
                                   _ context: RuleContext) -> [Finding] {
        guard let (since, due) = stale.pingDue(view) else { return [] }
        let deadline = due.addingSaturated(spec.tolerances.timing)
        guard now > deadline else { return [] }
        if let reported, reported == (view.conn, since) { return [] }
        reported = (view.conn, since)
        let sentBefore = view.lastMessageSentAt >= since
        let what = sentBefore ? "its last one at \(formatSeconds(since))" : "connecting at \(formatSeconds(since))"
        let evidence = sentBefore ? [Evidence(conn: view.conn, t: since, from: .client, summary: "last message sent")] : []
        return [finding(context, conn: view.conn, t: deadline,
                        "no message from the client within \(formatSeconds(deadline - since)) of \(what) (keep-alive interval \(formatSeconds(stale.interval)) + tolerance)",
                        evidence: evidence)]
    }
}
