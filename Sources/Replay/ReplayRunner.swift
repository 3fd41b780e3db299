import Capture
import Glibc
import Transport
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

        public init(mode: Mode, timing: ReplayTiming = ReplayTiming(), rules: MatchRules = .birdDefaults,
                    strict: Bool = false, signer: AuthSigner? = nil, seed: UInt64 = 1,
                    upstreamTLS: TLSContext? = nil, listenerTLS: TLSContext? = nil) {
            self.signer = signer
            self.upstreamTLS = upstreamTLS
            self.listenerTLS = listenerTLS
            self.mode = mode
            self.timing = timing
            self.rules = rules
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
        loop = try EventLoop()
    }

    /// Live microseconds since the replay started.
    var now: Micros { loop.now - startedAt }

    /// Runs until every selected connection has been replayed (or strict mode stopped it,
    /// or SIGINT/SIGTERM). Returns the deviations. Throws a `TransportError` when the
    /// listener cannot be opened.
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
        return deviations
    }

    // MARK: Server mode

    private func accept(_ connection: any ByteStream) {
        guard !done else { connection.close(); return }
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
        let script = ReplayScript(recording, config: ReplayScript.Config(
            role: .server, timing: options.timing, rules: options.rules, seed: options.seed &+ UInt64(accepted)))
        let liveConnection = LiveConnection(runner: self, script: script)
        live[ObjectIdentifier(liveConnection)] = liveConnection
        liveConnection.attach(connection)
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
        let script = ReplayScript(recording, config: ReplayScript.Config(
            role: .client, timing: options.timing, rules: options.rules, copy: copy, host: hostHeader,
            target: target, signer: options.signer, seed: options.seed &+ UInt64(copy * 1_000_003 + index)))
        let liveConnection = LiveConnection(runner: self, script: script)
        live[ObjectIdentifier(liveConnection)] = liveConnection
        StreamConnector.connect(loop: loop, host: host, port: port, tls: options.upstreamTLS) { [weak self] result in
            guard let self else { return }
            switch result {
            case .success(let connection):
                if self.done { connection.close(); return }
                liveConnection.attach(connection)
            case .failure(let error):
                self.report(Deviation(kind: .handshake, copy: copy, conn: recording.conn, t: self.now,
                                      expected: "a connection", observed: error.message))
                liveConnection.abort()
            }
        }
    }

    // MARK: From live connections

    func report(_ deviation: Deviation) {
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
        listener?.close()
        for connection in Array(live.values) { connection.abort() }
        live.removeAll()
        loop.stop()
    }
}
