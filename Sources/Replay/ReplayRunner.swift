import Capture
import Glibc
import Lifecycle
import Protocols
import Transport
import Vocabulary
import WebSocket

/// Runs a replay on a libuv loop: as the server on a listening socket, or as the client
/// (`copies` at once) against an upstream. The decisions are all in `ReplayScript`; this
/// only accepts, connects, and sequences the recorded connections.
public final class ReplayRunner {
    public enum Mode: Sendable, Hashable {
        /// Listen here and answer live clients: successive accepted connections replay
        /// successive recorded connections.
        case server(host: String, port: Int)
        /// Connect to this upstream; `target` overrides the recorded request target.
        case client(host: String, port: Int, target: String?, copies: Int)
    }

    public struct Options: Sendable {
        public var mode: Mode
        public var timing: ReplayTiming
        public var rules: MatchRules
        /// Stop everything at the first deviation.
        public var strict: Bool
        public var seed: UInt64
        /// Client mode: re-sign auth for the live socket id (`--app-secret`).
        public var signer: AuthSigner?
        /// Client mode: speak TLS to the upstream (a wss:// URL) with this client context.
        public var upstreamTLS: TLSContext?
        /// Server mode: serve clients over TLS with this server context.
        public var listenerTLS: TLSContext?
        /// Client mode: how long the TCP connect, the TLS handshake and the upgrade answer
        /// may each take (`--connect-timeout`).
        public var connectTimeout: Micros = 10_000_000
        /// Peer event names dropped from the comparison (`--ignore-event NAME`).
        public var ignoredEvents: Set<String> = []
        /// Server mode: serve every recorded client at once, each live connection matched
        /// to a recorded client by its key (`--all-clients`), instead of playing the
        /// recorded connections one after another to whoever connects.
        public var allClients = false
        /// The protocol the recordings speak (`ReplayProtocol.detect`, or one named).
        public var wire: ReplayProtocol
        /// The recorded connections that speak another protocol than `wire`, each with its
        /// own entry (`ReplayProtocol.detectEach`: a mixed capture).
        public var wires: [ConnectionID: ReplayProtocol] = [:]

        /// The entry `recording` is replayed with, its match rules and its signer: when its
        /// own entry is not `wire`, `rules` with the fields that entry says differ between
        /// runs, and the signer re-signing through that entry.
        func wire(for recording: RecordedConnection) -> (wire: ReplayProtocol, rules: MatchRules, signer: AuthSigner?) {
            guard let own = wires[recording.conn] else { return (wire, rules, signer) }
            var rules = rules
            rules.ignored.formUnion(own.volatileFields.ignored)
            rules.mapped.formUnion(own.volatileFields.mapped.subtracting(rules.ignored))
            return (own, rules, signer.map { AuthSigner(secret: $0.secret, wire: own.instance()) })
        }

        /// `rules` default to the fields `wire`'s entry says differ between runs.
        public init(mode: Mode, wire: ReplayProtocol, timing: ReplayTiming = ReplayTiming(), rules: MatchRules? = nil,
                    strict: Bool = false, signer: AuthSigner? = nil, seed: UInt64 = 1,
                    upstreamTLS: TLSContext? = nil, listenerTLS: TLSContext? = nil) {
            self.wire = wire
            self.signer = signer
            self.upstreamTLS = upstreamTLS
            self.listenerTLS = listenerTLS
            self.mode = mode
            self.timing = timing
            self.rules = rules ?? MatchRules(wire.volatileFields)
            self.strict = strict
            self.seed = seed
        }
    }

    public let loop: EventLoop
    public let options: Options
    public let recordings: [RecordedConnection]
    /// Every deviation, in the order found.
    public private(set) var deviations: [Deviation] = []
    /// Called once listening (server mode) with the bound address.
    public var onListening: ((String) -> Void)?
    /// Called with each deviation as it is found.
    public var onDeviation: ((Deviation) -> Void)?
    /// Live connections replayed (accepted or opened).
    public private(set) var connectionsPlayed = 0
    public private(set) var stoppedStrictly = false
    /// Client mode: why the run is unusable (the upstream could not be reached before any
    /// connection was established); `run` throws it.
    private var unusable: String?
    /// Client mode: some live connection got an answer to its upgrade request.
    private var anyEstablished = false
    /// Which peer frames are matched one by one, which loosely: learnt from the recordings.
    public let classes: PeerFrameClasses
    /// Loosely matched peer frames over all connections, by event name in order of appearance.
    public private(set) var looseTallies: [LooseTally] = []

    /// Server mode with `allClients`: one recorded client's connections and how far its
    /// live counterpart got.
    private struct Lane {
        var id: String
        var key: String
        var connections: [RecordedConnection]
        /// The next recorded connection to play.
        var next = 0
        /// Live connections of this client in progress.
        var open = 0
        var started = false
        var done = false
        var timer: TimerHandle?
    }
    private var lanes: [Lane] = []
    private var clientOfConnection: [ConnectionID: String] = [:]

    private var listener: TCPListener?
    /// Server mode over TLS: owns `listener` and finishes each client's handshake.
    private var tlsListener: TLSListener?
    private var live: [ObjectIdentifier: LiveConnection] = [:]
    private var accepted = 0
    private var waitTimer: TimerHandle?
    /// Client mode: the next recorded connection of each copy.
    private var nextOfCopy: [Int] = []
    private var startedAt: Int64 = 0
    private var done = false

    public init(recordings: [RecordedConnection], options: Options) throws {
        precondition(!recordings.isEmpty, "a replay needs at least one recorded connection")
        self.recordings = recordings
        self.options = options
        let role: Side = if case .server = options.mode { .server } else { .client }
        classes = PeerFrameClasses.learn(from: recordings, role: role, ignoring: options.ignoredEvents, wire: options.wire,
                                         wires: options.wires)
        for recording in recordings {
            let id = recording.client ?? "conn \(recording.conn)"
            clientOfConnection[recording.conn] = recording.client
            if let i = lanes.firstIndex(where: { $0.id == id }) {
                lanes[i].connections.append(recording)
            } else {
                lanes.append(Lane(id: id, key: recording.clientKey ?? "?", connections: [recording]))
            }
        }
        loop = try EventLoop()
    }

    /// Live microseconds since the replay started.
    var now: Micros { loop.now - startedAt }

    /// Runs until every selected connection has been replayed (or strict mode stopped it,
    /// or SIGINT/SIGTERM). Returns the deviations. Throws a `TransportError` when the
    /// listener cannot be opened, a `ReplayUnreachable` when no connection to the upstream
    /// could be made at all.
    public func run() throws -> [Deviation] {
        startedAt = loop.now
        let signals = try [SIGINT, SIGTERM].map { try loop.onSignal($0) { [weak self] _ in self?.stop() } }
        switch options.mode {
        case .server(let host, let port):
            let bound: TCPListener
            if let context = options.listenerTLS {
                let tlsListener = try TLSListener(loop: loop, host: host, port: port, context: context) { [weak self] connection in
                    self?.accept(connection)
                }
                tlsListener.onHandshakeError = { [weak self] error in self?.tlsHandshakeFailed(error) }
                self.tlsListener = tlsListener
                bound = tlsListener.listener
            } else {
                bound = try TCPListener(loop: loop, host: host, port: port) { [weak self] connection in
                    self?.accept(connection)
                }
            }
            listener = bound
            onListening?(bound.localAddress)
        case .client(_, _, _, let copies):
            nextOfCopy = Array(repeating: 0, count: copies)
            for copy in 1...copies { openNext(copy: copy) }
        }
        if !done { loop.run() }
        signals.forEach { $0.cancel() }
        listener?.close()
        loop.close()
        if let unusable { throw ReplayUnreachable(reason: unusable) }
        return deviations
    }

    // MARK: Server mode

    private func accept(_ connection: any ByteStream) {
        guard !done else { connection.close(); return }
        if options.allClients {
            acceptForAnyClient(connection)
            return
        }
        waitTimer?.cancel()
        guard accepted < recordings.count else {
            report(Deviation(kind: .extraConnection, conn: recordings.last!.conn, t: now,
                             observed: "connection from \(connection.remoteAddress) beyond the \(recordings.count) recorded"))
            let refusal = HTTPResponseHead(status: 503, reason: "Service Unavailable",
                                           headers: [HeaderField("Content-Length", "0"), HeaderField("Connection", "close")])
            connection.write(refusal.serialized)
            connection.closeAfterFlush()
            return
        }
        let recording = recordings[accepted]
        accepted += 1
        connectionsPlayed += 1
        let (wire, rules, _) = options.wire(for: recording)
        var config = ReplayScript.Config(role: .server, wire: wire, timing: options.timing, rules: rules,
                                         seed: options.seed &+ UInt64(accepted))
        config.classes = classes
        let script = ReplayScript(recording, config: config)
        let liveConnection = LiveConnection(runner: self, script: script)
        live[ObjectIdentifier(liveConnection)] = liveConnection
        liveConnection.attach(connection)
    }

    // MARK: Server mode, every client

    /// The script waits for the client's upgrade request: its key says which recorded
    /// client the connection plays. The first connection starts every client's clock: a
    /// recorded client that never connects is missing after its recorded start (from the
    /// first recorded connection) plus the patience.
    private func acceptForAnyClient(_ connection: any ByteStream) {
        if !lanes.contains(where: \.started) {
            let firstOpen = lanes.compactMap { $0.connections.first?.openedAt }.min() ?? 0
            for i in lanes.indices {
                let wait = options.timing.delay((lanes[i].connections.first?.openedAt ?? firstOpen) - firstOpen) + options.timing.patience
                lanes[i].timer = loop.schedule(after: wait) { [weak self] in
                    guard let self, !self.lanes[i].started else { return }
                    self.giveUp(lane: i)
                }
            }
        }
        let placeholder = ReplayScript(lanes[0].connections[0], config: ReplayScript.Config(role: .server, wire: options.wire))
        let liveConnection = LiveConnection(runner: self, script: placeholder)
        liveConnection.awaitsClient = true
        live[ObjectIdentifier(liveConnection)] = liveConnection
        liveConnection.attach(connection)
    }

    /// The recorded client a live upgrade request plays, by the analyzer's key of the live
    /// connection (the key without its IP address if no key matches exactly), and its
    /// script; nil (reported as an extra connection) when no recorded client with that key
    /// has a connection left. Among clients of one key, one whose previous connection is
    /// over continues its story before a new one starts, as the analyzer groups them.
    func assign(_ liveConnection: LiveConnection, request: HTTPRequestHead, from address: String) -> ReplayScript? {
        let open = OpenRecord(conn: 0, t: 0, client: address, server: "")
        let upgrade = UpgradeRecord(conn: 0, t: 0, from: .client, method: request.method, target: request.target, headers: request.headers)
        let key = ClientKeyMode.standard.key(open: open, request: upgrade)
        func pick(_ matches: (Lane) -> Bool) -> Int? {
            let candidates = lanes.indices.filter { matches(lanes[$0]) && !lanes[$0].done && lanes[$0].next < lanes[$0].connections.count }
            return candidates.first { lanes[$0].started && lanes[$0].open == 0 } ?? candidates.first { !lanes[$0].started } ?? candidates.first
        }
        guard let i = pick({ $0.key == key }) ?? pick({ Self.withoutAddress($0.key) == Self.withoutAddress(key) }) else {
            var extra = Deviation(kind: .extraConnection, conn: recordings.last?.conn ?? 0, t: now,
                                  observed: "connection from \(address) (key \(key)) beyond the recorded ones of every client with that key")
            extra.client = "(no recorded client)"
            report(extra)
            return nil
        }
        lanes[i].timer?.cancel()
        lanes[i].timer = nil
        lanes[i].started = true
        lanes[i].open += 1
        let recording = lanes[i].connections[lanes[i].next]
        lanes[i].next += 1
        accepted += 1
        connectionsPlayed += 1
        liveConnection.lane = i
        let (wire, rules, _) = options.wire(for: recording)
        var config = ReplayScript.Config(role: .server, wire: wire, timing: options.timing, rules: rules,
                                         seed: options.seed &+ UInt64(accepted))
        config.classes = classes
        return ReplayScript(recording, config: config)
    }

    /// "127.0.0.1 | agent | /path" -> "agent | /path".
    static func withoutAddress(_ key: String) -> Substring {
        guard let bar = key.range(of: " | ") else { return Substring(key) }
        return key[bar.upperBound...]
    }

    /// A live connection of lane `i` finished: wait (bounded) for the client's next one.
    private func laneFinished(_ i: Int) {
        lanes[i].open = max(0, lanes[i].open - 1)
        guard lanes[i].open == 0 else { return }
        guard lanes[i].next < lanes[i].connections.count else {
            lanes[i].done = true
            stopWhenEveryClientIsDone()
            return
        }
        let previous = lanes[i].connections[lanes[i].next - 1], next = lanes[i].connections[lanes[i].next]
        let wait = options.timing.delay(next.openedAt - previous.lastActivity) + options.timing.patience
        lanes[i].timer?.cancel()
        lanes[i].timer = loop.schedule(after: wait) { [weak self] in
            guard let self, self.lanes[i].open == 0 else { return }
            self.giveUp(lane: i)
        }
    }

    /// The recorded connections lane `i` never made are missing.
    private func giveUp(lane i: Int) {
        guard !done, !lanes[i].done else { return }
        for missing in lanes[i].connections[lanes[i].next...] {
            report(Deviation(kind: .missingConnection, conn: missing.conn, t: now,
                             expected: "connection \(missing.conn) (recorded at +\(Deviation.seconds(missing.openedAt))s)"))
        }
        lanes[i].next = lanes[i].connections.count
        lanes[i].done = true
        stopWhenEveryClientIsDone()
    }

    private func stopWhenEveryClientIsDone() {
        if lanes.allSatisfy(\.done) && live.isEmpty { stop() }
    }

    /// Server mode over TLS: a client that connected but failed the handshake never became
    /// a replayed connection; the user hears why.
    private func tlsHandshakeFailed(_ error: TransportError) {
        guard !done else { return }
        let next = recordings[min(accepted, recordings.count - 1)]
        report(Deviation(kind: .handshake, conn: next.conn, t: now,
                         expected: "a TLS handshake", observed: error.message))
    }

    /// Server mode, after a connection finished: wait (bounded) for the client's next one.
    private func awaitNextConnection(after finished: RecordedConnection) {
        guard accepted < recordings.count else {
            if live.isEmpty { stop() }
            return
        }
        guard live.isEmpty else { return }
        let next = recordings[accepted]
        let wait = options.timing.delay(next.openedAt - finished.lastActivity) + options.timing.patience
        waitTimer?.cancel()
        waitTimer = loop.schedule(after: wait) { [weak self] in
            guard let self else { return }
            for missing in self.recordings[self.accepted...] {
                self.report(Deviation(kind: .missingConnection, conn: missing.conn, t: self.now,
                                      expected: "connection \(missing.conn) (recorded at +\(Deviation.seconds(missing.openedAt))s)"))
            }
            self.accepted = self.recordings.count
            self.stop()
        }
    }

    // MARK: Client mode

    private func openNext(copy: Int) {
        guard case .client(let host, let port, let target, _) = options.mode, !done else { return }
        let index = nextOfCopy[copy - 1]
        guard index < recordings.count else {
            if live.isEmpty && nextOfCopy.allSatisfy({ $0 >= recordings.count }) { stop() }
            return
        }
        nextOfCopy[copy - 1] += 1
        connectionsPlayed += 1
        let recording = recordings[index]
        let defaultPort = options.upstreamTLS == nil ? 80 : 443
        let hostHeader = (host.contains(":") ? "[\(host)]" : host) + (port == defaultPort ? "" : ":\(port)")
        let (wire, rules, signer) = options.wire(for: recording)
        var config = ReplayScript.Config(
            role: .client, wire: wire, timing: options.timing, rules: rules, copy: copy, host: hostHeader,
            target: target, signer: signer, seed: options.seed &+ UInt64(copy * 1_000_003 + index))
        config.connectTimeout = options.connectTimeout
        config.classes = classes
        let script = ReplayScript(recording, config: config)
        let liveConnection = LiveConnection(runner: self, script: script)
        live[ObjectIdentifier(liveConnection)] = liveConnection
        StreamConnector.connect(loop: loop, host: host, port: port, tls: options.upstreamTLS,
                                timeout: options.connectTimeout) { [weak self] result in
            guard let self else { return }
            switch result {
            case .success(let connection):
                if self.done { connection.close(); return }
                liveConnection.attach(connection)
            case .failure(let error):
                self.unreachable(error.message, copy: copy, conn: recording.conn)
                liveConnection.abort()
            }
        }
    }

    // MARK: From live connections

    /// Adds one connection's loosely matched frames to the totals (at most
    /// `LooseEvents.maxNames` names; the rest under `LooseEvents.overflowName`).
    func tally(_ tallies: [LooseTally]) {
        for var tally in tallies {
            if looseTallies.count >= LooseEvents.maxNames, !looseTallies.contains(where: { $0.event == tally.event && $0.treatment == tally.treatment }) {
                tally.event = LooseEvents.overflowName
                tally.treatment = .others
            }
            if let i = looseTallies.firstIndex(where: { $0.event == tally.event && $0.treatment == tally.treatment }) {
                looseTallies[i].recorded += tally.recorded
                looseTallies[i].live += tally.live
            } else {
                looseTallies.append(tally)
            }
        }
    }

    /// Client mode: a live connection got the server's answer to its upgrade request.
    func established() { anyEstablished = true }

    /// Client mode: a connection could not be made (refused, DNS, TLS, timeout) or got no
    /// upgrade answer in time. Before any connection was established the upstream is
    /// unreachable and the run unusable: it stops, `run` throws. After it, the server went
    /// away during the replay: a `handshake` difference.
    func unreachable(_ reason: String, copy: Int, conn: ConnectionID) {
        guard !done else { return }
        if anyEstablished {
            report(Deviation(kind: .handshake, copy: copy, conn: conn, t: now, expected: "a connection", observed: reason))
        } else {
            unusable = reason
            stop()
        }
    }

    func report(_ deviation: Deviation) {
        var deviation = deviation
        if deviation.client == nil { deviation.client = clientOfConnection[deviation.conn] }
        deviations.append(deviation)
        onDeviation?(deviation)
        if options.strict && !done {
            stoppedStrictly = true
            stop()
        }
    }

    func finished(_ connection: LiveConnection) {
        guard live.removeValue(forKey: ObjectIdentifier(connection)) != nil, !done else { return }
        let recording = connection.script.recording
        switch options.mode {
        case .server where options.allClients:
            if let lane = connection.lane { laneFinished(lane) } else { stopWhenEveryClientIsDone() }
        case .server:
            awaitNextConnection(after: recording)
        case .client:
            let copy = connection.script.config.copy
            let index = nextOfCopy[copy - 1]
            let gap = index < recordings.count ? recordings[index].openedAt - recording.lastActivity : 0
            loop.schedule(after: options.timing.delay(gap)) { [weak self] in self?.openNext(copy: copy) }
        }
    }

    /// Ends the replay: every live connection is reset, the loop stops.
    public func stop() {
        guard !done else { return }
        done = true
        waitTimer?.cancel()
        for i in lanes.indices { lanes[i].timer?.cancel() }
        listener?.close()
        for connection in Array(live.values) { connection.abort() }
        live.removeAll()
        loop.stop()
    }
}

/// The upstream of a client-mode replay could not be reached (connection refused, a name
/// that does not resolve, a failed TLS handshake, no answer in time) before any connection
/// was established: nothing was replayed, the run is unusable.
public struct ReplayUnreachable: Error, Sendable, Hashable, CustomStringConvertible {
    public var reason: String
    public init(reason: String) { self.reason = reason }
    public var description: String { reason }
}
