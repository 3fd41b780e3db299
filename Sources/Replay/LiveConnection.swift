import Capture
import Transport
import Vocabulary
import WebSocket

/// The I/O shell around one `ReplayScript`: bytes from the socket become handshake heads
/// and frames, the script's commands become writes, ends and timers. Loop thread only.
final class LiveConnection {
    let runner: ReplayRunner
    private(set) var script: ReplayScript
    /// Server mode with `--all-clients`: the script is a placeholder until the upgrade
    /// request says which recorded client this connection plays.
    var awaitsClient = false
    /// Server mode with `--all-clients`: the runner's index of the recorded client played.
    var lane: Int?
    private var connection: (any ByteStream)?
    private var head = HTTPHeadParser()
    private var decoder = FrameDecoder()
    private var upgraded = false
    private var timer: TimerHandle?
    private var closeGuard: TimerHandle?
    private(set) var finished = false

    init(runner: ReplayRunner, script: ReplayScript) {
        self.runner = runner
        self.script = script
    }

    /// Takes over a connected stream (accepted, or connected to the upstream; TLS or not).
    func attach(_ connection: any ByteStream) {
        self.connection = connection
        connection.onRead = { [weak self] bytes in self?.read(bytes) }
        connection.onEnd = { [weak self] end in
            self?.handle(.peerEnded(end == .fin ? .fin : .reset))
        }
        connection.onClose = { [weak self] in
            guard let self else { return }
            self.connection = nil
            if !self.finished { self.handle(.peerEnded(.reset)) }
        }
        if script.config.role == .client { handle(.connected) }
    }

    private func read(_ bytes: [UInt8]) {
        if !upgraded {
            head.append(bytes)
            do {
                if script.config.role == .server {
                    guard let request = try head.parseRequest() else { return }
                    upgraded = true
                    if awaitsClient {
                        awaitsClient = false
                        guard let assigned = runner.assign(self, request: request, from: connection?.remoteAddress ?? "?") else {
                            refuse()
                            return
                        }
                        script = assigned
                    }
                    handle(.request(request))
                } else {
                    guard let response = try head.parseResponse() else { return }
                    upgraded = true
                    runner.established()
                    handle(.response(response))
                }
            } catch {
                runner.report(Deviation(kind: .handshake, copy: script.config.copy, conn: script.recording.conn,
                                        t: runner.now, expected: "an HTTP upgrade", observed: "unparseable HTTP head: \(error)"))
                abort()
                return
            }
            let rest = head.remainder
            guard !rest.isEmpty, !finished else { return }
            decoder.append(rest)
        } else {
            decoder.append(bytes)
        }
        do {
            while !finished, let frame = try decoder.next() { handle(.frame(frame)) }
        } catch {
            runner.report(Deviation(kind: .extra, copy: script.config.copy, conn: script.recording.conn,
                                    t: runner.now, observed: "undecodable frame: \(error)"))
            abort()
        }
    }

    func handle(_ event: ReplayEvent) {
        guard !finished else { return }
        let now = runner.now
        for command in script.handle(event, now: now) { carryOut(command, now: now) }
    }

    private func carryOut(_ command: ReplayAction, now: Micros) {
        switch command {
        case .write(let bytes):
            connection?.write(bytes)
        case .send(let frame):
            connection?.write(FrameEncoder.encode(frame))
        case .shutdown:
            connection?.shutdown()
        case .reset:
            connection?.reset()
        case .close:
            guard let connection else { return }
            connection.closeAfterFlush()
            // A peer that never reads would keep the flush (and the socket) forever.
            closeGuard = runner.loop.schedule(after: 2_000_000) { [weak connection] in connection?.close() }
        case .schedule(let at):
            timer?.cancel()
            timer = runner.loop.schedule(after: max(0, at - now)) { [weak self] in self?.handle(.timer) }
        case .report(let deviation):
            runner.report(deviation)
        case .tally(let tallies):
            runner.tally(tallies)
        case .unreachable(let reason):
            runner.unreachable(reason, copy: script.config.copy, conn: script.recording.conn)
        case .finished:
            finished = true
            timer?.cancel()
            runner.finished(self)
        }
    }

    /// A connection no recorded client is left for: 503, closed, no replay.
    private func refuse() {
        let refusal = HTTPResponseHead(status: 503, reason: "Service Unavailable",
                                       headers: [HeaderField("Content-Length", "0"), HeaderField("Connection", "close")])
        connection?.write(refusal.serialized)
        connection?.closeAfterFlush()
        finished = true
        runner.finished(self)
    }

    /// Stops at once (strict mode, shutdown): RST, no more events.
    func abort() {
        guard !finished else { return }
        finished = true
        timer?.cancel()
        connection?.reset()
        runner.finished(self)
    }
}
