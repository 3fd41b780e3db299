import Capture
import ProxyCore
import Transport

/// One proxied connection pair in the I/O shell: the client's socket, the upstream socket
/// (once connected), and the sans-IO `RelaySession` that decides everything. The pair only
/// turns socket happenings into `RelayEvent`s and carries out the `RelayCommand`s, in order.
///
/// Backpressure is the shell's own: when one side's write queue passes the high-water mark
/// the other side stops being read, and reading resumes when the queue drains. The session's
/// own pause requests (faults, waiting for the upstream) are tracked apart, and a side is read
/// only when neither wants it paused.
final class RelayPair {
    let id: ConnectionID
    unowned let server: ProxyServer
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
    /// Re-entrancy guard: commands that lead to new events (a write failing at once) queue them.
    private var handling = false
    private var queued: [RelayEvent] = []
    /// What the control API shows about this connection.
    var summary: ConnectionSummary

    init(id: ConnectionID, client: any ByteStream, server: ProxyServer, session: RelaySession, now: Micros) {
        self.id = id
        self.server = server
        self.session = session
        summary = ConnectionSummary(id: id, client: client.remoteAddress, upstream: server.settings.upstream.description,
                                    openedAt: now)
        attach(client, as: .client)
    }

    /// Records the open and starts relaying.
    func start(now: Micros) {
        let commands = session.start(now: now)
        perform(commands)
    }

    /// Delivers one event to the session and carries out its answer. Events raised while
    /// commands run (a write that fails on the spot) are handled right after, in order.
    func deliver(_ event: RelayEvent) {
        queued.append(event)
        guard !handling else { return }
        handling = true
        while !queued.isEmpty {
            let next = queued.removeFirst()
            perform(session.handle(next, now: server.now))
        }
        handling = false
        finishIfDone()
    }

    // MARK: Sockets

    private func attach(_ connection: any ByteStream, as side: Side) {
        sockets[side] = connection
        connection.highWaterMark = server.settings.highWaterMark
        connection.lowWaterMark = server.settings.lowWaterMark
        connection.onRead = { [unowned self] bytes in
            deliver(.received(from: side, bytes: bytes))
        }
        connection.onEnd = { [unowned self] end in
            switch end {
            case .fin: deliver(.ended(side: side, kind: .fin, detail: nil))
            case .reset: deliver(.ended(side: side, kind: .rst, detail: "connection reset by peer"))
            case .error(let reason): deliver(.ended(side: side, kind: .error, detail: reason))
            }
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
        let upstream = server.settings.upstream
        let tls = server.settings.upstreamTLS
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
        deliver(.upstreamConnected)
    }

    private func upstreamFailed(_ error: TransportError) {
        connectAttempt = nil
        gone.insert(.server)
        deliver(.upstreamFailed(error.message))
    }

    private func updateReading(_ side: Side) {
        guard let socket = sockets[side] else { return }
        if pausedBySession.contains(side) || pausedByBackpressure.contains(side) {
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

    /// Closes a side once its queued writes are out, bounded: a peer that never reads gets a reset.
    private func close(_ side: Side) {
        guard let socket = sockets[side] else {
            abandon(side)
            return
        }
        socket.closeAfterFlush()
        if !socket.isClosed, flushTimers[side] == nil {
            flushTimers[side] = server.loop.schedule(after: server.settings.closeFlushTimeout) { [weak socket] in
                socket?.reset()
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
    func faultsChanged() {
        deliver(.faultsChanged)
    }

    /// Proxy shutdown: marks the still-open sides as cut off by the end of the capture.
    func captureEnded(now: Micros) {
        for side in Side.allCases where !summary.ended.contains(side) && (sockets[side] != nil) {
            let record = CaptureRecord.end(EndRecord(conn: id, t: now, side: side, kind: .captureEnd,
                                                     detail: "the proxy stopped"))
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
