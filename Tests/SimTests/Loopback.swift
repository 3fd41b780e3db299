import Bird
import JSON
import Sim
import Vocabulary
import WebSocket

/// Sim clients and a sim server wired together in memory with a fake clock and zero latency:
/// the whole lifecycle runs at full speed without sockets. Frames can be filtered to play a
/// network fault (stalled pongs, a blackhole), and the server can be "killed" and restarted.
struct Loopback {
    enum Delivery {
        case toServer(SimServerEvent)
        case toClient(Int, SimClientEvent)
    }

    struct Sent {
        var time: SimMicros
        var socket: SimSocketID
        var message: BirdMessage?
        var frame: Frame
    }

    var server: SimServer
    var clients: [SimClient]
    var now: SimMicros = 0
    var clientTimers: [[SimClientTimer: SimMicros]]
    var serverTimers: [SimServerTimer: SimMicros] = [:]
    var serverUp = true
    /// Frames from the server to clients pass only when this says so.
    var serverToClient: (Frame) -> Bool = { _ in true }
    private var queue: [Delivery] = []
    private var nextConnection: SimConnectionID = 1
    private var connectionOf: [Int: [SimSocketID: SimConnectionID]] = [:]
    private var socketOf: [SimConnectionID: (client: Int, socket: SimSocketID)] = [:]
    /// Every command each client issued, with its time.
    private(set) var commands: [[(time: SimMicros, command: SimClientCommand)]]
    private(set) var serverCommands: [(time: SimMicros, command: SimServerCommand)] = []

    init(server: SimServerSettings = SimServerSettings(), clients settings: [SimClientSettings], seed: UInt64 = 7) {
        self.server = SimServer(settings: server, seed: seed)
        self.clients = settings.enumerated().map { SimClient(settings: $0.element, random: SeededGenerator.derived(seed: seed, index: $0.offset)) }
        self.clientTimers = Array(repeating: [:], count: settings.count)
        self.commands = Array(repeating: [], count: settings.count)
        for command in self.server.start(now: 0) { serverDid(command) }
    }

    // MARK: - Driving

    mutating func client(_ index: Int, _ event: SimClientEvent) {
        queue.append(.toClient(index, event))
        drain()
    }

    /// Runs until `time`, firing every timer due on the way, in time order.
    mutating func run(until time: SimMicros) {
        drain()
        while true {
            var next: (SimMicros, Delivery)?
            for (index, timers) in clientTimers.enumerated() {
                for (timer, at) in timers where at <= time && (next == nil || at < next!.0) {
                    next = (at, .toClient(index, .timer(timer)))
                }
            }
            for (timer, at) in serverTimers where at <= time && (next == nil || at < next!.0) {
                next = (at, .toServer(.timer(timer)))
            }
            guard let (at, delivery) = next else { break }
            now = max(now, at)
            switch delivery {
            case .toClient(let index, .timer(let timer)): clientTimers[index][timer] = nil
            case .toServer(.timer(let timer)): serverTimers[timer] = nil
            default: break
            }
            queue.append(delivery)
            drain()
        }
        now = max(now, time)
    }

    mutating func run(for duration: SimMicros) { run(until: now + duration) }

    /// The server process dies: every socket ends with `end` on the client's side.
    mutating func killServer(_ end: SimSocketEnd = .fin) {
        serverUp = false
        for (connection, owner) in socketOf.sorted(by: { $0.key < $1.key }) {
            queue.append(.toClient(owner.client, .socketClosed(owner.socket, end)))
            socketOf[connection] = nil
            connectionOf[owner.client]?[owner.socket] = nil
        }
        server = SimServer(settings: server.settings, seed: 99)
        serverTimers = [:]
        drain()
    }

    mutating func startServer() {
        serverUp = true
        for command in server.start(now: now) { serverDid(command) }
    }

    /// The server closes one client's current connection with a close frame.
    mutating func serverCloses(client index: Int, code: UInt16) {
        guard let (connection, _) = socketOf.first(where: { $0.value.client == index }) else { return }
        serverDid(.close(connection, code: code, reason: "test"))
        drain()
    }

    // MARK: - Looking at what happened

    func states(_ index: Int) -> [(time: SimMicros, from: SimConnectionState, to: SimConnectionState, detail: String)] {
        commands[index].compactMap {
            if case .stateChanged(let from, let to, let detail) = $0.command { (time: $0.time, from: from, to: to, detail: detail) } else { nil }
        }
    }

    func sent(_ index: Int) -> [Sent] {
        commands[index].compactMap {
            if case .send(let socket, let frame) = $0.command {
                Sent(time: $0.time, socket: socket, message: BirdMessage.parse(frame), frame: frame)
            } else { nil }
        }
    }

    func sent(_ index: Int, event: String) -> [Sent] { sent(index).filter { $0.message?.event == event } }

    func opens(_ index: Int) -> [(time: SimMicros, socket: SimSocketID)] {
        commands[index].compactMap { if case .openSocket(let id) = $0.command { (time: $0.time, socket: id) } else { nil } }
    }

    func closes(_ index: Int) -> [(time: SimMicros, socket: SimSocketID, code: UInt16)] {
        commands[index].compactMap {
            if case .close(let id, let code, _) = $0.command { (time: $0.time, socket: id, code: code) } else { nil }
        }
    }

    func logs(_ index: Int) -> [String] {
        commands[index].compactMap { if case .log(let line) = $0.command { line } else { nil } }
    }

    func delivered(_ index: Int) -> [BirdMessage] {
        commands[index].compactMap { if case .delivered(let message) = $0.command { message } else { nil } }
    }

    // MARK: - Plumbing

    private mutating func drain() {
        while !queue.isEmpty {
            switch queue.removeFirst() {
            case .toServer(let event):
                for command in server.handle(event, now: now) { serverDid(command) }
            case .toClient(let index, let event):
                for command in clients[index].handle(event, now: now) { clientDid(index, command) }
            }
        }
    }

    private mutating func clientDid(_ index: Int, _ command: SimClientCommand) {
        commands[index].append((now, command))
        switch command {
        case .openSocket(let socket):
            guard serverUp else {
                queue.append(.toClient(index, .socketClosed(socket, .failed("connection refused"))))
                return
            }
            let connection = nextConnection
            nextConnection += 1
            connectionOf[index, default: [:]][socket] = connection
            socketOf[connection] = (index, socket)
            queue.append(.toClient(index, .socketOpened(socket)))
            queue.append(.toServer(.opened(connection, path: "/app/\(clients[index].settings.appKey)?protocol=7")))
        case .send(let socket, let frame):
            if let connection = connectionOf[index]?[socket] { queue.append(.toServer(.received(connection, frame))) }
        case .close(let socket, let code, let reason):
            if let connection = connectionOf[index]?[socket] {
                queue.append(.toServer(.received(connection, .close(code: code, reason: reason))))
                queue.append(.toServer(.closed(connection)))
                connectionOf[index]?[socket] = nil
                socketOf[connection] = nil
            }
        case .schedule(let timer, let at): clientTimers[index][timer] = at
        case .cancel(let timer): clientTimers[index][timer] = nil
        case .stateChanged, .log, .delivered: break
        }
    }

    private mutating func serverDid(_ command: SimServerCommand) {
        serverCommands.append((now, command))
        switch command {
        case .send(let connection, let frame):
            guard let owner = socketOf[connection], serverToClient(frame) else { return }
            queue.append(.toClient(owner.client, .received(owner.socket, frame)))
        case .close(let connection, let code, let reason):
            guard let owner = socketOf[connection] else { return }
            queue.append(.toClient(owner.client, .received(owner.socket, .close(code: code, reason: reason))))
            queue.append(.toServer(.closed(connection)))
            socketOf[connection] = nil
            connectionOf[owner.client]?[owner.socket] = nil
        case .schedule(let timer, let at): serverTimers[timer] = at
        case .log: break
        }
    }
}

extension SimMicros {
    static func s(_ seconds: Double) -> SimMicros { SimDuration.seconds(seconds) }
}
