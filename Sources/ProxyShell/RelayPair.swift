import Capture
import ProxyCore
import Transport
import Vocabulary

/// One proxied connection pair in the I/O shell: the client's socket, the upstream socket
/// (once connected), and the sans-IO `RelaySession` that decides everything. The pair only
/// turns socket happenings into `RelayEvent`s and carries out the `RelayCommand`s, in order.
///
/// Backpressure is the shell's own: when one side's write queue passes the high-water mark
/// the other side stops being read, and reading resumes when the queue drains. The session's
/// own pause requests (faults, waiting for the upstream) are tracked apart, and a side is read
/// only when neither wants it paused.
package final class RelayPair {
    package let id: ConnectionID
    package unowned let server: ProxyServer
    private var session: RelaySession
    /// Plain TCP or TLS: the pair relays plaintext either way.
    private var sockets: [Side: any ByteStream] = [:]
    /// Cancels the upstream connect in progress (TCP or TLS); nil when none is.
    private var connectAttempt: (() -> Void)?
    /// Sides whose socket is gone (closed by us, or never opened after the session gave up on it).
    private var gone: Set<Side> = []
    private var pausedBySession: Set<Side> = []
    private var pausedByBackpressure: Set<Side> = []
    private var timer: TimerHandle?
    private var flushTimers: [Side: TimerHandle] = [:]
    /// Sides the session closed: FIN sent (after the queued writes), what the peer still
    /// sends is read and discarded until its own FIN, then the socket closes. Closing a
    /// socket with unread bytes would make the kernel send RST instead of the FIN recorded.
    private var closing: Set<Side> = []
    /// Sides whose peer sent FIN (nothing more will be read from them).
    private var finReceived: Set<Side> = []
    /// Re-entrancy guard: commands that lead to new events (a write failing at once) queue them.
    private var handling = false
    private var queued: [RelayEvent] = []
    /// The handshake is not over yet (see `ProxyServer.handshakeEnded`).
    private var pending = true
    /// What the control API shows about this connection.
    package var summary: ConnectionSummary

    /// Forward mode: this pair's own upstream (nil: the proxy's `--upstream`).
    package let target: ForwardTarget?

    package init(id: ConnectionID, client: any ByteStream, server: ProxyServer, session: RelaySession, now: Micros,
         target: ForwardTarget? = nil) {
        self.id = id
        self.server = server
        self.session = session
        self.target = target
        summary = ConnectionSummary(id: id, client: client.remoteAddress,
                                    upstream: target?.description ?? server.settings.upstream.description, openedAt: now)
        attach(client, as: .client)
    }

    /// Records the open and starts relaying.
    package func start(now: Micros) {
        let commands = session.start(now: now)
        perform(commands)
    }

    /// Delivers one event to the session and carries out its answer. Events raised while
    /// commands run (a write that fails on the spot) are handled right after, in order.
    package func deliver(_ event: RelayEvent) {
        queued.append(event)
        guard !handling else { return }
        handling = true
        while !queued.isEmpty {
            let next = queued.removeFirst()
            perform(session.handle(next, now: server.now))
        }
        handling = false
        noteHandshakeEnd()
        finishIfDone()
    }

    /// Closes this pair while its handshake is pending, to make room (`ConnectionAdmission`).
    package func evict(reason: String) {
        guard !handling else { return }
        handling = true
        perform(session.evict(reason: reason, now: server.now))
        handling = false
        finishIfDone()
    }

    /// Tells the server once the handshake is over, so the pair stops counting as pending.
    private func noteHandshakeEnd() {
        guard pending, !session.isHandshaking else { return }
        pending = false
        server.handshakeEnded(self)
    }

    // MARK: Sockets

    private func attach(_ connection: any ByteStream, as side: Side) {
        sockets[side] = connection
        connection.highWaterMark = server.settings.highWaterMark
        connection.lowWaterMark = server.settings.lowWaterMark
        connection.onRead = { [unowned self] bytes in
            guard !closing.contains(side) else { return }   // draining a closed side
            deliver(.received(from: side, bytes: bytes))
        }
        connection.onEnd = { [unowned self] end in
            if case .fin = end { finReceived.insert(side) }
            switch end {
            case .fin: deliver(.ended(side: side, kind: .fin, detail: nil))
            case .reset: deliver(.ended(side: side, kind: .rst, detail: "connection reset by peer"))
            case .error(let reason): deliver(.ended(side: side, kind: .error, detail: reason))
            }
            // A side being closed is done once its peer's end is in (and recorded).
            if closing.contains(side), case .fin = end { sockets[side]?.closeAfterFlush() }
        }
        connection.onDrain = { [unowned self] in
            // This side's queue drained: the other side may be read again.
            pausedByBackpressure.remove(side.other)
            updateReading(side.other)
        }
        connection.onClose = { [unowned self] in
            sockets[side] = nil
            gone.insert(side)
            flushTimers.removeValue(forKey: side)?.cancel()
            finishIfDone()
        }
    }

    private func connectUpstream() {
        let upstream = target.map { (host: $0.host, port: $0.port) }
            ?? (host: server.settings.upstream.host, port: server.settings.upstream.port)
        let tls = target.map { $0.secure ? server.settings.upstreamTLS : nil } ?? server.settings.upstreamTLS
        connectAttempt = StreamConnector.connect(loop: server.loop, host: upstream.host, port: upstream.port, tls: tls,
                                                 timeout: server.settings.upstreamConnectTimeout) { [unowned self] result in
            switch result {
            case .success(let connection): upstreamConnected(connection)
            case .failure(let error):
                // A refused certificate or an unreachable upstream is the operator's business
                // too, not only the client's 502: logged for plain TCP as for TLS.
                server.live?.problem("conn \(id): upstream \(upstream.host):\(upstream.port): \(error.message)")
                upstreamFailed(error)
            }
        }
    }

    private func upstreamConnected(_ connection: any ByteStream) {
        connectAttempt = nil
        if gone.contains(.server) {   // the session gave up meanwhile
            connection.close()
            return
        }
        attach(connection, as: .server)
        updateReading(.server)
        // Where the upstream leg runs, for `export --pcap` (the open record has the client's leg).
        let note = CaptureRecord.note(.upstreamLeg(conn: id, t: server.now, local: connection.localAddress,
                                                   remote: connection.remoteAddress))
        summary.observe(note)
        server.record(note)
        deliver(.upstreamConnected)
    }

    private func upstreamFailed(_ error: TransportError) {
        connectAttempt = nil
        gone.insert(.server)
        deliver(.upstreamFailed(error.message))
    }

    private func updateReading(_ side: Side) {
        guard let socket = sockets[side] else { return }
        if closing.contains(side) {
            socket.resumeReading()   // drained until the peer's FIN
        } else if pausedBySession.contains(side) || pausedByBackpressure.contains(side) {
            socket.pauseReading()
        } else {
            socket.resumeReading()
        }
    }

    // MARK: Commands

    private func perform(_ commands: [RelayCommand]) {
        for command in commands { perform(command) }
    }

    private func perform(_ command: RelayCommand) {
        switch command {
        case .connectUpstream:
            connectUpstream()
        case .send(let side, let bytes):
            guard let socket = sockets[side] else { return }
            socket.write(bytes)
            if socket.isOverHighWater, !pausedByBackpressure.contains(side.other) {
                pausedByBackpressure.insert(side.other)
                updateReading(side.other)
            }
        case .shutdown(let side):
            sockets[side]?.shutdown()
        case .reset(let side):
            if let socket = sockets[side] { socket.reset() } else { abandon(side) }
        case .close(let side):
            close(side)
        case .record(let record):
            summary.observe(record)
            server.record(record)
        case .schedule(let timerID, let at):
            timer?.cancel()
            timer = server.loop.schedule(after: max(0, at - server.now)) { [unowned self] in
                timer = nil
                deliver(.timer(id: timerID))
            }
        case .pauseReading(let side):
            pausedBySession.insert(side)
            updateReading(side)
        case .resumeReading(let side):
            pausedBySession.remove(side)
            updateReading(side)
        }
    }

    /// Closes a side cleanly: FIN once its queued writes are out, then reads (discarded) until
    /// the peer's own FIN, which the session records, then the socket closes. So the peer
    /// sees the FIN the capture says it saw, not the RST the kernel sends when a socket with
    /// unread bytes is closed. Bounded: a peer that never reads gets a reset (recorded as
    /// such); one that reads but never ends its side is closed.
    private func close(_ side: Side) {
        guard let socket = sockets[side] else {
            abandon(side)
            return
        }
        guard !finReceived.contains(side) else {
            socket.closeAfterFlush()
            armFlushTimer(side, socket)
            return
        }
        closing.insert(side)
        socket.shutdown()
        updateReading(side)
        armFlushTimer(side, socket)
    }

    private func armFlushTimer(_ side: Side, _ socket: any ByteStream) {
        guard !socket.isClosed, flushTimers[side] == nil else { return }
        flushTimers[side] = server.loop.schedule(after: server.settings.closeFlushTimeout) { [weak self, weak socket] in
            guard let self, let socket, !socket.isClosed else { return }
            flushTimers[side] = nil
            if socket.writeQueueBytes > 0 {
                let record = CaptureRecord.end(EndRecord(conn: id, t: server.now, side: side.other, kind: .rst,
                                                         detail: "the \(side.rawValue) read nothing for \(server.settings.closeFlushTimeout / 1_000_000) s; reset by the proxy",
                                                         leg: Leg(peer: side)))
                summary.observe(record)
                server.record(record)
                socket.reset()
            } else {
                socket.close()
            }
        }
    }

    /// A side with no socket: cancel a pending upstream connect, mark it gone.
    private func abandon(_ side: Side) {
        if side == .server, let cancel = connectAttempt {
            cancel()
            connectAttempt = nil
        }
        gone.insert(side)
    }

    /// Wakes the session to consult the fault rules at once (control API).
    package func faultsChanged() {
        deliver(.faultsChanged)
    }

    /// Proxy shutdown: marks the peers whose streams were still open as cut off by the end
    /// of the capture.
    package func captureEnded(now: Micros) {
        for side in Side.allCases where !summary.ended.contains(side) && (sockets[side] != nil) {
            let record = CaptureRecord.end(EndRecord(conn: id, t: now, side: side, kind: .captureEnd,
                                                     detail: "the proxy stopped", leg: Leg(peer: side)))
            summary.observe(record)
            server.record(record)
        }
    }

    private func finishIfDone() {
        guard !handling, sockets.isEmpty, connectAttempt == nil, gone.contains(.client) else { return }
        timer?.cancel()
        timer = nil
        server.pairFinished(self)
    }
}
