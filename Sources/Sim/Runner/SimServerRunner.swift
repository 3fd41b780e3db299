import Protocols
import Transport
import Vocabulary
import WebSocket

/// Runs a `SimServer` on a libuv loop: accepts TCP connections, answers the HTTP upgrade,
/// decodes frames into the machine and carries out its commands. All I/O is here; every
/// decision is the machine's. Use on the loop's thread only.
public final class SimServerRunner {
    public let loop: EventLoop
    /// The server's log lines (connections, subscriptions, refusals); nil to drop them.
    public var onLog: ((String) -> Void)?
    public private(set) var server: any SimProtocolServer
    private var listener: TCPListener?
    private var connections: [SimConnectionID: ServerSocket] = [:]
    private var timers: [SimServerTimer: TimerHandle] = [:]
    private var nextID: SimConnectionID = 1
    /// How long a close we sent waits for the client's close before the TCP close.
    private let closeWait: Int64 = 2_000_000

    /// A runner for `settings.protocolName`'s machine (Bird's when no protocol has that
    /// name: the CLI checks the name first).
    public init(loop: EventLoop, settings: SimServerSettings, seed: UInt64) {
        self.loop = loop
        self.server = SimServerProtocols.make(settings, seed: seed) ?? SimServer(settings: settings, seed: seed)
    }

    /// Binds and starts serving; returns the bound address ("127.0.0.1:43121").
    @discardableResult
    public func listen(_ address: HostPort) throws -> String {
        let listener = try TCPListener(loop: loop, host: address.host, port: address.port) { [weak self] tcp in
            self?.accept(tcp)
        }
        self.listener = listener
        perform(server.start(now: loop.now))
        return listener.localAddress
    }

    /// A graceful end: stop accepting, and close every open connection with 1001 (going
    /// away), as a server restarting for a deploy would. `stop()` finishes the job.
    public func goAway() {
        listener?.close()
        listener = nil
        for id in connections.keys.sorted() {
            perform([.close(id, code: 1001, reason: "server shutting down")])
        }
    }

    /// Stops listening and closes every connection at once (no close handshake).
    public func stop() {
        listener?.close()
        listener = nil
        for timer in timers.values { timer.cancel() }
        timers = [:]
        for socket in connections.values { socket.tcp.close() }
        connections = [:]
    }

    // MARK: - Sockets

    private func accept(_ tcp: TCPConnection) {
        let id = nextID
        nextID += 1
        let socket = ServerSocket(id: id, tcp: tcp)
        connections[id] = socket
        tcp.onRead = { [weak self] bytes in self?.read(bytes, on: id) }
        tcp.onEnd = { [weak self, weak tcp] _ in
            self?.gone(id)
            tcp?.close()
        }
        tcp.onClose = { [weak self] in self?.gone(id) }
    }

    private func read(_ bytes: [UInt8], on id: SimConnectionID) {
        guard let socket = connections[id] else { return }
        switch socket.phase {
        case .upgrading:
            socket.parser.append(bytes)
            let request: HTTPRequestHead
            do {
                guard let parsed = try socket.parser.parseRequest() else { return }
                request = parsed
            } catch {
                refuse(socket, status: error.status, error.message)
                return
            }
            guard request.isWebSocketUpgrade else {
                refuse(socket, status: 400, "expected a WebSocket upgrade (GET with Upgrade: websocket)")
                return
            }
            let offered = UpgradeEvidence(target: request.target, headers: request.headers).subprotocols
            let accepted = server.acceptedSubprotocol(offered: offered).map { [HeaderField("Sec-WebSocket-Protocol", $0)] } ?? []
            socket.tcp.write(WebSocketHandshake.response(accepting: request, extraHeaders: accepted).serialized)
            socket.phase = .open
            perform(server.handle(.opened(id, path: request.target), now: loop.now))
            let rest = socket.parser.remainder
            if !rest.isEmpty { frames(rest, on: socket) }
        case .open, .closing:
            frames(bytes, on: socket)
        case .done:
            break
        }
    }

    private func frames(_ bytes: [UInt8], on socket: ServerSocket) {
        socket.readFrames(bytes) { incoming in
            switch incoming {
            case .frame(let frame):
                perform(server.handle(.received(socket.id, frame), now: loop.now))
            case .protocolError(let error):
                socket.tcp.write(FrameEncoder.encode(.close(code: error.closeCode.rawValue, reason: error.message)))
                socket.tcp.closeAfterFlush()
                socket.phase = .done
                gone(socket.id)
            case .closeAnswered:
                socket.tcp.close()
                socket.phase = .done
            }
        }
    }

    private func refuse(_ socket: ServerSocket, status: Int, _ reason: String) {
        let body = Array((reason + "\n").utf8)
        let head = HTTPResponseHead(status: status, reason: status == 431 ? "Request Header Fields Too Large" : "Bad Request", headers: [
            HeaderField("Content-Type", "text/plain"), HeaderField("Content-Length", String(body.count)),
            HeaderField("Connection", "close"),
        ])
        socket.tcp.write(head.serialized + body)
        socket.tcp.closeAfterFlush()
        socket.phase = .done
        onLog?("refused an HTTP request with \(status): \(reason)")
    }

    /// The connection is gone, whatever the cause: the machine forgets it once.
    private func gone(_ id: SimConnectionID) {
        guard let socket = connections.removeValue(forKey: id) else { return }
        socket.phase = .done
        socket.closeTimer?.cancel()
        perform(server.handle(.closed(id), now: loop.now))
    }

    // MARK: - Commands

    private func perform(_ commands: [SimServerCommand]) {
        for command in commands {
            switch command {
            case .send(let id, let frame):
                guard let socket = connections[id], socket.phase == .open else { continue }
                socket.tcp.write(FrameEncoder.encode(frame))
            case .close(let id, let code, let reason):
                guard let socket = connections[id], socket.phase == .open else { continue }
                socket.tcp.write(FrameEncoder.encode(.close(code: code, reason: reason)))
                if socket.peerSentClose {
                    socket.tcp.closeAfterFlush()
                    socket.phase = .done
                } else {
                    socket.phase = .closing
                    socket.closeTimer = loop.schedule(after: closeWait) { [weak socket] in socket?.tcp.close() }
                }
            case .schedule(let timer, let at):
                timers[timer]?.cancel()
                timers[timer] = loop.schedule(after: max(0, at - loop.now)) { [weak self] in
                    guard let self else { return }
                    self.timers[timer] = nil
                    self.perform(self.server.handle(.timer(timer), now: self.loop.now))
                }
            case .log(let line):
                onLog?(line)
            }
        }
    }
}

/// One accepted connection's I/O state.
private final class ServerSocket: SimFrameReading {
    enum Phase { case upgrading, open, closing, done }
    let id: SimConnectionID
    let tcp: TCPConnection
    var phase = Phase.upgrading
    var parser = HTTPHeadParser()
    var decoder = FrameDecoder()
    var peerSentClose = false
    var closeTimer: TimerHandle?

    init(id: SimConnectionID, tcp: TCPConnection) {
        self.id = id
        self.tcp = tcp
    }

    var readsFrames: Bool { phase == .open || phase == .closing }
    var isClosing: Bool { phase == .closing }
}
