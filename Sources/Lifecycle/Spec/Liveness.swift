import Capture
import Vocabulary

/// What each liveness model (`LifecycleSpec.LivenessModel`) makes of one connection's
/// facts: when the client's next ping is due, what answers it, and when the connection is
/// dead by the model's measure. The stale rules and the timeline's close classification
/// all ask here, so a stale close means the same thing to each of them.
extension LifecycleSpec.StaleSpec {
    /// The client's ping that is due next: from when it is counted and by when it must
    /// come (before the tolerance). Nil when the model has the client send no pings
    /// (`serverPing`) or the connection is not connected.
    func pingDue(_ view: ConnectionView) -> (since: Micros, due: Micros)? { pingDue(ConnectionTimes(view)) }

    /// `pingDue` from the connection's times alone (what the timer walks read).
    func pingDue(_ view: ConnectionTimes) -> (since: Micros, due: Micros)? {
        guard let connectedAt = view.connectedAt else { return nil }
        switch model {
        case .pingAfterSilence:
            return (view.lastReceivedAt, view.lastReceivedAt.addingSaturated(view.activityTimeout))
        case .heartbeat:
            let since = max(view.lastPing ?? connectedAt, connectedAt)
            return (since, since.addingSaturated(interval))
        case .serverPing:
            return nil
        case .serverTimeout:
            let since = max(view.lastMessageSentAt, connectedAt)
            return (since, since.addingSaturated(interval))
        }
    }

    /// What the model takes as the answer to the client's latest ping: any frame from the
    /// server (ping after silence), or the reply matched to the heartbeat (heartbeat).
    func answer(in view: ConnectionView) -> Evidence? {
        model == .heartbeat ? view.pongSincePing : view.receivedSincePing
    }

    /// When `answer(in:)`'s evidence came, from the connection's times alone.
    func answerTime(in view: ConnectionTimes) -> Micros? {
        model == .heartbeat ? view.pongSincePing : view.receivedSincePing
    }

    /// Server pings: when the client, hearing no ping from the server since its last one
    /// (or since the connection opened), must give the connection up: the ping interval
    /// and timeout in force (the open packet's, or the spec's) after it.
    ///
    /// Server timeout: the last message from the server (or the connection's opening), and
    /// the server timeout after it.
    func serverSilenceDeadline(_ view: ConnectionView) -> (since: Evidence, deadline: Micros)? {
        guard let connectedAt = view.connectedAt else { return nil }
        switch model {
        case .serverPing:
            let since = view.lastServerPing ?? Evidence(conn: view.conn, t: connectedAt, from: .server, summary: "connected")
            return (since, since.t.addingSaturated(view.serverPingInterval).addingSaturated(view.serverPingTimeout))
        case .serverTimeout:
            let since = view.lastMessageReceivedAt > connectedAt
                ? Evidence(conn: view.conn, t: view.lastMessageReceivedAt, from: .server, summary: "last message from the server")
                : Evidence(conn: view.conn, t: connectedAt, from: .server, summary: "connected")
            return (since, since.t.addingSaturated(pongTimeout))
        case .pingAfterSilence, .heartbeat:
            return nil
        }
    }

    /// Whether the server's silence alone, not an unanswered ping, tells the client that
    /// the connection is dead (server pings, server timeout).
    var watchesServerSilence: Bool { model == .serverPing || model == .serverTimeout }

    /// What went unanswered when the connection is dead by the model's measure at `t`
    /// (within `tolerance` before its deadline), with a phrase for messages; nil while it
    /// is alive. Ping after silence and heartbeat: the client's ping, unanswered for the
    /// pong timeout. Server pings: the last server ping, with none after it for the ping
    /// interval + timeout. Server timeout: the last message from the server, with none
    /// after it for the server timeout.
    func missed(_ view: ConnectionView, at t: Micros, tolerance: Micros) -> (evidence: Evidence, what: String)? {
        switch model {
        case .pingAfterSilence, .heartbeat:
            guard let ping = view.lastPing else { return nil }
            let unansweredUntil = ping.t.addingSaturated(pongTimeout)
            if let answer = answer(in: view), answer.t <= min(unansweredUntil, t) { return nil }
            guard t >= unansweredUntil.subtractingSaturated(tolerance) else { return nil }
            return (ping, model == .heartbeat ? "an unanswered heartbeat" : "an unanswered ping")
        case .serverPing:
            guard let (since, deadline) = serverSilenceDeadline(view),
                  t >= deadline.subtractingSaturated(tolerance) else { return nil }
            return (since, view.lastServerPing == nil ? "no server ping since connected" : "the last server ping")
        case .serverTimeout:
            guard let (since, deadline) = serverSilenceDeadline(view),
                  t >= deadline.subtractingSaturated(tolerance) else { return nil }
            return (since, view.lastMessageReceivedAt > (view.connectedAt ?? .max)
                ? "the last message from the server" : "no message from the server since connected")
        }
    }
}
