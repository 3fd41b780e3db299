import Bird
import Transport
import Vocabulary
import WebSocket

/// Runs N `SimClient` machines on one libuv loop against one URL: opens sockets, performs the
/// upgrade, masks and encodes what the machines send, decodes what arrives, and turns timer
/// requests into libuv timers. Every decision is the machines'. Use on the loop's thread only.
public final class SimClientRunner {
    public let loop: EventLoop
    public let url: SimURL
    /// `(client number from 1, from, to, detail)` for every state change.
    public var onStateChange: ((Int, SimConnectionState, SimConnectionState, String) -> Void)?
    /// `(client number, line)`: errors, refusals, subscriptions, sign-in.
    public var onLog: ((Int, String) -> Void)?
    /// `(client number, event)`: server and client events handed to the app.
    public var onDelivered: ((Int, BirdMessage) -> Void)?
    public private(set) var clients: [SimClient]
    private var sockets: [[SimSocketID: ClientSocket]]
    private var timers: [[SimClientTimer: TimerHandle]]
    /// Masking keys and handshake keys; the machines' own generators stay untouched by I/O.
    private var random: SeededGenerator
    /// How long a close we sent waits for the server's close before the TCP close.
    private let closeWait: Int64 = 1_000_000

    public init(loop: EventLoop, url: SimURL, clients settings: [SimClientSettings], seed: UInt64) {
        self.loop = loop
        self.url = url
        self.clients = settings.enumerated().map { SimClient(settings: $0.element, random: .derived(seed: seed, index: $0.offset)) }
        self.sockets = Array(repeating: [:], count: settings.count)
        self.timers = Array(repeating: [:], count: settings.count)
        self.random = .derived(seed: seed, index: -1)
    }

    /// Every client calls `connect()`.
    public func start() {
        for index in clients.indices { feed(index, .connect) }
    }

    /// Every client with a socket or a retry pending calls `disconnect()` (close 1000); a
    /// `failed` client has neither and stays `failed`, so the last line says how it ended.
    public func disconnectAll() {
        for index in clients.indices where ![.disconnected, .failed].contains(clients[index].state) {
            feed(index, .disconnect)
        }
    }

    /// Cancels every timer and closes every socket at once.
    public func stop() {
        for index in clients.indices {
            for timer in timers[index].values { timer.cancel() }
            timers[index] = [:]
            for socket in sockets[index].values { socket.abort() }
            sockets[index] = [:]
        }
    }

    /// Hands one event to client `index` and carries out its commands.
    public func feed(_ index: Int, _ event: SimClientEvent) {
        let commands = clients[index].handle(event, now: loop.now)
        for command in commands { perform(index, command) }
    }

    // MARK: - Commands

    private func perform(_ index: Int, _ command: SimClientCommand) {
        switch command {
        case .openSocket(let id):
            open(index, id)
        case .send(let id, let frame):
            guard let socket = sockets[index][id] else { return }
            switch socket.phase {
            case .connecting: socket.pipelined.append(frame)
            case .upgrading, .open: socket.tcp?.write(masked(frame))
            case .closing, .done: break
            }
        case .close(let id, let code, let reason):
            guard let socket = sockets[index][id] else { return }
            close(socket, code: code, reason: reason)
        case .schedule(let timer, let at):
            timers[index][timer]?.cancel()
            timers[index][timer] = loop.schedule(after: max(0, at - loop.now)) { [weak self] in
                guard let self else { return }
                self.timers[index][timer] = nil
                self.feed(index, .timer(timer))
            }
        case .cancel(let timer):
            timers[index].removeValue(forKey: timer)?.cancel()
        case .stateChanged(let from, let to, let detail):
            onStateChange?(index + 1, from, to, detail)
        case .log(let line):
            onLog?(index + 1, line)
        case .delivered(let message):
            onDelivered?(index + 1, message)
        }
    }

    private func open(_ index: Int, _ id: SimSocketID) {
        let socket = ClientSocket(client: index, id: id)
        sockets[index][id] = socket
        socket.attempt = TCPConnector.connect(loop: loop, host: url.host, port: url.port,
                                              timeout: clients[index].settings.handshakeTimeout) { [weak self, weak socket] result in
            guard let self, let socket else { return }
            socket.attempt = nil
            switch result {
            case .success(let tcp): self.connected(socket, tcp)
            case .failure(let error): self.ended(socket, .failed(error.message))
            }
        }
    }

    private func connected(_ socket: ClientSocket, _ tcp: TCPConnection) {
        socket.tcp = tcp
        socket.phase = .upgrading
        tcp.onRead = { [weak self, weak socket] bytes in
            guard let self, let socket else { return }
            self.read(bytes, on: socket)
        }
        tcp.onEnd = { [weak self, weak socket] end in
            guard let self, let socket else { return }
            switch end {
            case .fin: self.ended(socket, .fin)
            case .reset: self.ended(socket, .reset)
            case .error(let reason): self.ended(socket, .failed(reason))
            }
        }
        socket.key = WebSocketHandshake.makeKey(using: &random)
        let request = WebSocketHandshake.request(host: url.hostHeader, target: url.target, key: socket.key, extraHeaders: [
            // One User-Agent per client instance, so the analyzer's default grouping keeps
            // the clients of one process apart.
            HeaderField("User-Agent", "faultline-sim/\(SimURL.clientVersion) (client \(socket.client + 1))"),
            HeaderField("X-Faultline-Client", String(socket.client + 1)),
        ])
        tcp.write(request.serialized)
        for frame in socket.pipelined { tcp.write(masked(frame)) }
        socket.pipelined = []
    }

    private func read(_ bytes: [UInt8], on socket: ClientSocket) {
        switch socket.phase {
        case .upgrading:
            socket.parser.append(bytes)
            let response: HTTPResponseHead
            do {
                guard let parsed = try socket.parser.parseResponse() else { return }
                response = parsed
            } catch {
                ended(socket, .failed("bad upgrade response: \(error.message)"))
                return
            }
            if let problem = WebSocketHandshake.problem(with: response, forKey: socket.key) {
                ended(socket, .failed("upgrade refused: \(problem)"))
                return
            }
            socket.phase = .open
            feed(socket.client, .socketOpened(socket.id))
            let rest = socket.parser.remainder
            if !rest.isEmpty { frames(rest, on: socket) }
        case .open, .closing:
            frames(bytes, on: socket)
        case .connecting, .done:
            break
        }
    }

    private func frames(_ bytes: [UInt8], on socket: ClientSocket) {
        socket.readFrames(bytes) { incoming in
            switch incoming {
            case .frame(let frame):
                feed(socket.client, .received(socket.id, frame))
            case .protocolError(let error):
                if socket.phase == .open {
                    socket.tcp?.write(masked(.close(code: error.closeCode.rawValue, reason: error.message)))
                    ended(socket, .failed("protocol error from the server: \(error.message)"))
                }
                socket.abort()
            case .closeAnswered:
                socket.finish()
                sockets[socket.client][socket.id] = nil
            }
        }
    }

    /// The socket ended without the machine asking: tell it, and let go of the socket.
    private func ended(_ socket: ClientSocket, _ end: SimSocketEnd) {
        guard sockets[socket.client][socket.id] === socket else { return }
        let wasClosing = socket.phase == .closing
        sockets[socket.client][socket.id] = nil
        socket.abort()
        if !wasClosing { feed(socket.client, .socketClosed(socket.id, end)) }
    }

    /// The machine is done with this socket: close handshake if the WebSocket is open.
    private func close(_ socket: ClientSocket, code: UInt16, reason: String) {
        switch socket.phase {
        case .open:
            socket.tcp?.write(masked(.close(code: code, reason: reason)))
            if socket.peerSentClose {
                socket.finish()
                sockets[socket.client][socket.id] = nil
            } else {
                socket.phase = .closing
                socket.closeTimer = loop.schedule(after: closeWait) { [weak self, weak socket] in
                    guard let self, let socket else { return }
                    socket.finish()
                    self.sockets[socket.client][socket.id] = nil
                }
            }
        case .connecting, .upgrading, .closing, .done:
            socket.abort()
            sockets[socket.client][socket.id] = nil
        }
    }

    private func masked(_ frame: Frame) -> [UInt8] {
        var frame = frame
        frame.maskingKey = MaskingKey.random(using: &random)
        return FrameEncoder.encode(frame)
    }
}

/// One socket of one client: connecting, upgrading, open, closing.
private final class ClientSocket: SimFrameReading {
    enum Phase { case connecting, upgrading, open, closing, done }
    let client: Int
    let id: SimSocketID
    var phase = Phase.connecting
    var attempt: ConnectAttempt?
    var tcp: TCPConnection?
    var key = ""
    /// Frames the machine sent before the TCP connection was up: they follow the upgrade request.
    var pipelined: [Frame] = []
    var parser = HTTPHeadParser()
    var decoder = FrameDecoder()
    var peerSentClose = false
    var closeTimer: TimerHandle?

    init(client: Int, id: SimSocketID) {
        self.client = client
        self.id = id
    }

    var readsFrames: Bool { phase == .open || phase == .closing }
    var isClosing: Bool { phase == .closing }

    /// Close after what is queued went out (the close handshake is done or given up).
    func finish() {
        phase = .done
        closeTimer?.cancel()
        tcp?.closeAfterFlush()
    }

    /// Stop whatever is in progress now.
    func abort() {
        phase = .done
        closeTimer?.cancel()
        attempt?.cancel()
        attempt = nil
        tcp?.close()
    }
}
