import Bird

/// The client's timers: reconnect, handshake timeout, trigger, and the stale check (a ping
/// after the activity timeout of silence, close 4201 after the pong timeout without a frame).
extension SimClient {
    mutating func fired(_ timer: SimClientTimer, _ now: SimMicros) {
        guard let deadline = deadlines[timer] else { return }
        if now < deadline {
            // Early (a loop clock that lags the one `now` comes from): wait the rest.
            emit(.schedule(timer, at: deadline))
            return
        }
        deadlines[timer] = nil
        switch timer {
        case .reconnect:
            guard state == .unavailable, socket == nil else { return }
            openSocket(now, why: "retry")
        case .handshake:
            guard let old = socket, !handshakeDone else { return }
            emit(.close(old, code: 3008, reason: "no handshake"))
            clearConnection()
            backOff(now, why: "no handshake within \(SimDuration.format(settings.handshakeTimeout))")
        case .activity:
            activityDue(now)
        case .pong:
            pongDue(now)
        case .trigger:
            guard handshakeDone else { return }
            for channel in channels where BirdChannelKind(channel: channel).needsAuth {
                trigger(channel, event: "client-chat")
            }
            if let interval = settings.triggerInterval, interval > 0 { schedule(.trigger, at: now + interval) }
        }
    }

    /// Silence for the activity timeout: ping, and wait the pong timeout for any frame.
    mutating func activityDue(_ now: SimMicros) {
        guard handshakeDone, let socket, pingSentAt == nil else { return }
        let due = lastActivity + activityTimeout
        if now < due {
            schedule(.activity, at: due)
            return
        }
        if has(.noPing) {
            schedule(.activity, at: now + activityTimeout)
            return
        }
        emit(.send(socket, BirdMessage(event: settings.event("ping")).frame))
        pingSentAt = now
        // `premature-stale-close` never stops a running pong timer, nor restarts it.
        if !(has(.prematureStaleClose) && deadlines[.pong] != nil) {
            schedule(.pong, at: now + settings.pongTimeout)
        }
    }

    /// The pong timeout passed after our ping: the connection is stale.
    mutating func pongDue(_ now: SimMicros) {
        guard handshakeDone, let socket else { return }
        guard pingSentAt != nil || has(.prematureStaleClose) else { return }
        if has(.noStaleClose) {
            emit(.log("no pong within \(SimDuration.format(settings.pongTimeout)); keeping the connection"))
            pingSentAt = nil
            lastActivity = now
            schedule(.activity, at: now + activityTimeout)
            return
        }
        let code: UInt16 = has(.wrongStaleCode) ? 1000 : 4201
        emit(.close(socket, code: code, reason: "pong not received"))
        clearConnection()
        reconnectNow(now, why: "closed \(code): no pong within \(SimDuration.format(settings.pongTimeout))")
    }
}
