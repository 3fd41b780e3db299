import CLI
import Capture
import ControlAPI
import Faults
import ProxyCore
import Vocabulary
import WebSocket
import Transport

/// The proxy's I/O shell: listens, pairs each accepted client with a `RelaySession`, and
/// records what the sessions emit. It decides nothing about the WebSocket traffic (that is
/// ProxyCore's job); it moves bytes, time and records.
///
/// Embeddable: it runs on an `EventLoop` it is given and never runs or stops that loop, so
/// `faultline demo` can host it next to the simulator peers. Every method must be called on
/// the loop's thread.
///
/// Times are microseconds since `start()` on the loop's monotonic clock; the capture header
/// carries the matching wall-clock start (`startedAt`).
package final class ProxyServer {
    package let loop: EventLoop
    package let settings: ProxySettings
    /// The rules every session consults (shared with the control API).
    package let faultEngine: FaultEngine
    /// Where lifecycle lines go with `--live` (nil: quiet).
    package let live: LiveView?

    private var origin: Int64
    /// Forward mode's front door (`--forward`); nil for the reverse proxy.
    package private(set) var forward: ForwardProxy?
    private var listener: TCPListener?
    private var capture: CaptureWriter?
    private var pairs: [ConnectionID: RelayPair] = [:]
    /// Connections still in their handshake (pairs, and `--route` requests being read), and
    /// the same oldest first (stale entries skipped when read).
    private var pending: Set<PendingConnection> = []
    private var pendingOrder: [PendingConnection] = []
    /// `--route`: clients whose request head is being read to pick their upstream, by key.
    private var routeReaders: [Int: RouteReader] = [:]
    private var nextRouteReader = 0
    private var nextConnection = 1
    private var stopped = false
    package var counters = ControlMetrics()
    private var acceptProblems = ProblemThrottle()
    /// RLIMIT_NOFILE's soft limit, read at start (nil: unlimited).
    private let descriptorLimit = TCPConnection.descriptorLimit
    /// Where the proxy's own problems go (a failed accept, the capture stopping) when there
    /// is no live view: nil prints them on standard error, as `faultline proxy` does; an
    /// embedding host (FaultlineKit) collects them instead, so nothing reaches its stderr.
    package var onProblem: ((String) -> Void)?
    /// Called once when `stop()` has finished (the capture is closed).
    package var onStopped: (() -> Void)?
    /// Sees every record as it is made, before it is written (live analysis).
    package var recordObserver: ((CaptureRecord) -> Void)?
    /// Watchers of the control API's event stream (`ctl watch`).
    package let watchHub = WatchHub()
    /// Fault records written (faults that fired), and the capture's size once closed: for
    /// the shutdown summary.
    package private(set) var faultsFired = 0
    package private(set) var captureTotals: CaptureWriter.Totals?
    /// This proxy's name in the `Via` header of the requests it forwards: random, so that
    /// another proxy of this process chained in front of it is not taken for itself.
    package let viaPseudonym = "faultline-" + String(UInt32.random(in: 0...UInt32.max), radix: 16)
    /// The listener as registered in `ProxyListeners.process`, until `stop()`.
    private var registeredListener: HostPort?

    package init(loop: EventLoop, settings: ProxySettings, live: LiveView? = nil) {
        self.loop = loop
        self.settings = settings
        self.live = live
        origin = loop.now
        faultEngine = FaultEngine(rules: settings.faultRules, seed: settings.seed, proxyStart: 0)
    }

    /// Capture-relative now.
    package var now: Micros { loop.now - origin }
    /// Wall-clock time of `start()`, microseconds since the Unix epoch.
    package var startedAt: Int64 { loop.wallClockStart + origin }
    /// The bound listening address ("127.0.0.1:43123"), once started.
    package private(set) var listenAddress = ""
    /// Connections currently open.
    package var openConnections: Int { pairs.count }

    /// Binds the listener and creates the capture. Nothing is left running on failure.
    /// Returns the bound address (the kernel's port when asked for port 0).
    @discardableResult
    package func start() throws(ProxyStartError) -> String {
        origin = loop.now
        let listener: TCPListener
        do {
            listener = try TCPListener(loop: loop, host: settings.listen.host, port: settings.listen.port) { [unowned self] in
                accept($0)
            }
        } catch {
            throw ProxyStartError("\(error)")
        }
        listenAddress = listener.localAddress
        do throws(ProxyStartError) { try registerListener() } catch {
            listener.close()
            throw error
        }
        if let forwardSettings = settings.forward { forward = ForwardProxy(server: self, settings: forwardSettings) }
        if let path = settings.recordPath {
            var header = CaptureHeader(tool: FaultlineVersion.tool, startedAt: startedAt &+ settings.clockOffset, source: "proxy",
                                       settings: settings.headerSettings(boundListen: listenAddress))
            header.spec = settings.recordedSpec
            do {
                capture = try CaptureWriter(path: path, header: header, replacing: settings.overwriteRecord,
                                            rotation: settings.recordRotation)
            } catch {
                listener.close()
                unregisterListener()
                throw ProxyStartError("\(error)")
            }
        }
        listener.onAcceptError = { [unowned self] error in acceptFailed(error) }
        self.listener = listener
        return listenAddress
    }

    /// Stops accepting, marks open connections as cut off by the end of the capture, and
    /// flushes and closes the capture. Open sockets are left to `EventLoop.close()`.
    package func stop() {
        guard !stopped else { return }
        stopped = true
        listener?.close()
        listener = nil
        unregisterListener()
        let t = now
        for id in pairs.keys.sorted() { pairs[id]?.captureEnded(now: t) }
        forward?.captureEnded(now: t)
        for key in routeReaders.keys.sorted() { routeReaders[key]?.evict(reason: "the proxy stopped") }
        if let capture {
            do { try capture.close() } catch { report("closing the capture: \(error)") }
            captureTotals = capture.totals
            self.capture = nil
        }
        onStopped?()
    }

    /// Refuses an upstream that leads back to this proxy's listener (itself, or through
    /// other proxies of this process: see `ProxyListeners`), else registers the listener.
    private func registerListener() throws(ProxyStartError) {
        guard case .success(let bound) = HostPort.parse(listenAddress) else { return }
        var upstreams = settings.routes.upstreams.map { HostPort(host: $0.host, port: $0.port) }
        if settings.forward == nil, settings.routes.isEmpty || settings.routes.hasDefault {
            upstreams.append(HostPort(host: settings.upstream.host, port: settings.upstream.port))
        }
        let loop = ProxyListeners.process.withLock { listeners -> [HostPort]? in
            if let loop = listeners.loop(from: bound, upstreams: upstreams) { return loop }
            listeners.add(bound, upstreams: upstreams)
            return nil
        }
        if let loop {
            let through = loop.count > 1 ? " through " + loop.dropLast().map(\.description).joined(separator: ", then ") : ""
            throw ProxyStartError("the upstream leads back to this proxy's own listener \(bound)\(through): every connection "
                                  + "would loop into the proxy again; point the upstream at the real server")
        }
        registeredListener = bound
    }

    private func unregisterListener() {
        guard let registered = registeredListener else { return }
        ProxyListeners.process.withLock { $0.remove(registered) }
        registeredListener = nil
    }

    // MARK: Connections

    /// Accept failed, usually at the file-descriptor limit (EMFILE/ENFILE). libuv has already
    /// done what nginx and libuv users do: it closes its reserve descriptor, accepts and
    /// closes the waiting clients (they see the connection close at once instead of hanging
    /// in the backlog), and reopens the reserve; the listener keeps accepting once
    /// descriptors are free. Here it is reported: on stderr and in the capture, rate-limited
    /// (see `ProblemThrottle`), with how many failures each report stands for.
    private func acceptFailed(_ error: TransportError) {
        guard let count = acceptProblems.occurred(now: now) else { return }
        let atLimit = error.message.contains("too many open files") || error.message.contains("file table overflow")
        let advice = atLimit ? "; waiting clients were closed; raise the limit (ulimit -n) or lower --max-connections" : ""
        let message = "cannot accept a connection: \(error.message)"
            + (count > 1 ? " (\(count) times since the last report)" : "") + advice
        record(.note(NoteRecord(conn: nil, t: now, level: .error, message: message)))
        report(message)
    }

    /// A client accepted inside the descriptor headroom (`DescriptorBudget`): 503 and closed
    /// at once, so the descriptors left serve the open relays; reported like accept failures.
    private func refuseNearDescriptorLimit(_ connection: TCPConnection, descriptor: Int) {
        let limit = descriptorLimit ?? 0
        let body = "faultline: out of file descriptors (descriptor \(descriptor) of \(limit)); try again later\n"
        connection.write(Array(("HTTP/1.1 503 Service Unavailable\r\nContent-Type: text/plain; charset=utf-8\r\n"
            + "Content-Length: \(body.utf8.count)\r\nConnection: close\r\n\r\n" + body).utf8))
        connection.closeAfterFlush()
        guard let count = acceptProblems.occurred(now: now) else { return }
        let message = "refused a connection from \(connection.remoteAddress) with 503: descriptor \(descriptor) is within "
            + "\(DescriptorBudget.headroom(limit: limit)) of the limit of \(limit) open files (too many open files ahead)"
            + (count > 1 ? "; \(count) connections refused or failed since the last report" : "")
            + "; raise the limit (ulimit -n) or lower --max-connections"
        record(.note(NoteRecord(conn: nil, t: now, level: .error, message: message)))
        report(message)
    }

    /// A new client: with `--tls-cert` its TLS handshake runs first (a failed one is noted
    /// and shown, and never becomes a connection); then it is admitted as a byte stream.
    private func accept(_ connection: TCPConnection) {
        if let fd = connection.descriptor, DescriptorBudget.isNearLimit(descriptor: Int(fd), limit: descriptorLimit) {
            refuseNearDescriptorLimit(connection, descriptor: Int(fd))
            return
        }
        if let forward {
            forward.accept(connection)
            return
        }
        guard let context = settings.listenerTLS else {
            admit(connection)
            return
        }
        TLSConnection.server(over: connection, context: context) { [unowned self] result in
            switch result {
            case .success(let tls):
                admit(tls)
            case .failure(let error):
                let message = "TLS from a client: \(error.message)"
                record(.note(NoteRecord(conn: nil, t: now, level: .warning, message: message)))
                live?.problem(message)
            }
        }
    }

    /// A new client: admitted or refused once (`ConnectionAdmission`), then relayed. Forward
    /// mode passes the pair's own `target`, the `Host` to send it, and the bytes already read
    /// from the client (its request, rewritten). With `--route` (and no target) the request
    /// head is read first to pick the upstream; the reader counts as a pending connection.
    package func admit(_ connection: any ByteStream, target: ForwardTarget? = nil, hostHeader: String? = nil, pathPrefix: String = "",
                       firstBytes: [UInt8] = []) {
        switch settings.admission.decide(open: pairs.count + routeReaders.count, pending: pending.count) {
        case .admit: break
        case .refuse:
            refuse(connection)
            return
        case .admitEvictingOldestPending:
            evictOldestPending()
        }
        if target == nil, !settings.routes.isEmpty {   // --route: the request picks the upstream
            nextRouteReader += 1
            let reader = RouteReader(server: self, stream: connection, key: nextRouteReader)
            routeReaders[reader.key] = reader
            markPending(.route(reader.key))
            reader.start()
            return
        }
        relay(connection, target: target, hostHeader: hostHeader, pathPrefix: pathPrefix, firstBytes: firstBytes)
    }

    /// Starts relaying an admitted `connection` (see `admit`; `--route` hands its clients here
    /// once their upstream is known, without a second admission).
    func relay(_ connection: any ByteStream, target: ForwardTarget?, hostHeader: String?, pathPrefix: String,
               firstBytes: [UInt8]) {
        let id = takeConnectionID()
        var config = settings.relayConfig
        config.viaPseudonym = viaPseudonym
        if let target {
            config.upstreamHost = hostHeader ?? target.authority
            config.upstreamPathPrefix = pathPrefix
        }
        let faults = settings.faultRules.isEmpty && !settings.faultsAlwaysOn ? nil : faultEngine
        // A frame's decoded event is read by the faults, the live view and live analysis
        // only (the capture line does not carry it): with none of them, decoding every
        // text message would be work on the relay's hot path for nobody.
        if faults == nil, live == nil, recordObserver == nil { config.protocolChoice = .none }
        let session = RelaySession(conn: id, clientAddress: connection.remoteAddress, listenAddress: listenAddress,
                                   upstreamAddress: target?.description ?? settings.upstream.hostHeader, config: config,
                                   faults: faults)
        let t = now
        let pair = RelayPair(id: id, client: connection, server: self, session: session, now: t, target: target)
        pairs[id] = pair
        markPending(.pair(id))
        counters.connectionsTotal += 1
        pair.start(now: t)
        if !firstBytes.isEmpty { pair.deliver(.received(from: .client, bytes: firstBytes)) }
    }

    /// A `--route` reader is done (handed off, answered or closed): no longer open or pending.
    func routeReaderEnded(_ reader: RouteReader) {
        routeReaders[reader.key] = nil
        pendingEnded(.route(reader.key))
    }

    /// `--route` readers still reading a request head (for tests and the shutdown summary).
    package var routingConnections: Int { routeReaders.count }

    /// The next connection number (relayed pairs, forward mode's tunnels and HTTP exchanges).
    package func takeConnectionID() -> ConnectionID {
        defer { nextConnection += 1 }
        return nextConnection
    }

    /// Closes the pending connection that has waited longest (its handshake not done), to
    /// admit a new client; see `ConnectionAdmission`.
    private func evictOldestPending() {
        let reason = "evicted before its handshake completed, to admit a new client "
            + "(pending handshakes \(settings.admission.maxPending), connections \(settings.admission.maxConnections); "
            + "see --max-pending and --max-connections)"
        while !pendingOrder.isEmpty {
            let entry = pendingOrder.removeFirst()
            guard pending.contains(entry) else { continue }
            switch entry {
            case .pair(let id):
                guard let pair = pairs[id] else { continue }
                pending.remove(entry)
                pair.evict(reason: reason)
            case .route(let key):
                guard let reader = routeReaders[key] else { continue }
                reader.evict(reason: reason)
            }
            return
        }
    }

    private func markPending(_ entry: PendingConnection) {
        pending.insert(entry)
        pendingOrder.append(entry)
    }

    private func pendingEnded(_ entry: PendingConnection) {
        pending.remove(entry)
        // Stale entries are dropped in bulk, so the list stays within twice the pending count.
        if pendingOrder.count > 2 * pending.count + 64 { pendingOrder.removeAll { !pending.contains($0) } }
    }

    /// The pair's handshake is over (open, refused or failed): it no longer counts as pending.
    package func handshakeEnded(_ pair: RelayPair) {
        pendingEnded(.pair(pair.id))
    }

    /// Over `--max-connections`: a 503 that says why, then FIN; the request is read and
    /// discarded so the close is clean (no RST from unread bytes), bounded by a timer.
    private func refuse(_ connection: any ByteStream) {
        let body = "faultline: too many connections (limit \(settings.maxConnections), see --max-connections)\n"
        let response = "HTTP/1.1 503 Service Unavailable\r\nContent-Type: text/plain; charset=utf-8\r\n"
            + "Content-Length: \(body.utf8.count)\r\nConnection: close\r\n\r\n" + body
        record(.note(NoteRecord(conn: nil, t: now, level: .warning,
                                message: "refused a connection from \(connection.remoteAddress): at the limit of \(settings.maxConnections) connections")))
        connection.write(Array(response.utf8))
        connection.shutdown()
        let deadline = loop.schedule(after: 2_000_000) { [weak connection] in connection?.close() }
        connection.onRead = { _ in }
        connection.onEnd = { [weak connection] _ in
            deadline.cancel()
            connection?.close()
        }
    }

    package func pairFinished(_ pair: RelayPair) {
        pairs[pair.id] = nil
        handshakeEnded(pair)
        watchHub.connectionEnded(pair.id, t: now)
    }

    package func pair(_ id: ConnectionID) -> RelayPair? { pairs[id] }
    package var allPairs: [RelayPair] { pairs.keys.sorted().compactMap { pairs[$0] } }

    /// A problem of the proxy itself: in the live view, to `onProblem`, or on stderr.
    private func report(_ message: String) {
        if let live { live.problem(message) } else if let onProblem { onProblem(message) } else {
            Console.err("faultline proxy: \(message)\n")
        }
    }

    // MARK: Records

    /// Appends to the capture, updates the counters, and shows what matters in the live view.
    package func record(_ record: CaptureRecord) {
        counters.observe(record)
        if case .fault = record { faultsFired += 1 }
        live?.show(record)
        recordObserver?(record)
        watchHub.publish(record)
        guard let capture else { return }
        do {
            try capture.append(record)
        } catch {
            // The relay goes on; the capture is the casualty, and the user is told once.
            self.capture = nil
            report("recording stopped: \(error)")
        }
    }
}

/// A connection still in its handshake: a relayed pair, or a `--route` client whose request
/// head is being read (keyed by its reader, as it has no connection id yet).
enum PendingConnection: Hashable {
    case pair(ConnectionID)
    case route(Int)
}

/// The proxy could not start: the message names the address or file and the reason.
package struct ProxyStartError: Error, CustomStringConvertible {
    package var description: String
    package init(_ description: String) { self.description = description }
}
