import JSON
import Transport
import WebSocket

/// The control API's HTTP/1.1 server: a `TCPListener` on the proxy's loop, one request per
/// connection (`Connection: close` after each response), bodies by `Content-Length` only.
/// Decisions are the `ControlRouter`'s; this only moves bytes and bounds time and memory:
/// a request must arrive within `requestTimeout` (and each of its pieces within
/// `idleTimeout`), a body is at most `maxBodyBytes`, and at most `maxConnections` clients are
/// served at once. Clients that have not sent a whole request yet never lock the API out:
/// when every slot is taken, the oldest of them is closed to admit the newcomer
/// (`ConnectionAdmission`), so idle sockets cannot starve real requests.
///
/// Everything runs on the loop thread, where the backend is called too.
public final class ControlServer {
    public let loop: EventLoop
    /// The bound address, "127.0.0.1:PORT" (the real port when asked for port 0).
    public let address: String
    public let port: Int
    public let router: ControlRouter

    public var maxBodyBytes = ControlRequestReader.defaultMaxBodyBytes
    public var maxConnections = 64
    /// Microseconds a client has to send its request and read the response.
    public var requestTimeout: Int64 = 10_000_000
    /// Microseconds a client may stay silent before its request is complete.
    public var idleTimeout: Int64 = 2_000_000

    private let backend: (any ControlBackend)?
    /// Answers one request (the control API's router, or the toxiproxy API's).
    private let respond: (ControlRequest) -> ControlResponse
    private var listener: TCPListener?
    private var clients: [ObjectIdentifier: Client] = [:]
    /// Clients in the order they came, for evicting the oldest unanswered one.
    private var arrivals: [ObjectIdentifier] = []

    /// One client connection: its reader and the timers that bound its life.
    private struct Client {
        weak var connection: TCPConnection?
        var reader: ControlRequestReader
        var timer: TimerHandle?
        var idleTimer: TimerHandle?
        /// A response is on its way (closed once flushed).
        var answered = false
    }

    /// Listens on `host:port` (port 0 picks a free one). A `host` that is not loopback is
    /// refused unless `allowRemote`, since the API can break every proxied connection.
    /// With `token`, every request needs `Authorization: Bearer <token>`. Call on the
    /// loop thread.
    public static func start(loop: EventLoop, host: String = "127.0.0.1", port: Int, token: String?,
                             allowRemote: Bool = false, backend: any ControlBackend) throws -> ControlServer {
        let loopback = LoopbackHost.isLoopback(host: host)
        guard loopback || allowRemote else {
            throw ControlServerError("control API on \(host): not a loopback address; anyone who can reach it can break every proxied connection (allow it with --control-allow-remote and a token)")
        }
        if allowRemote, token == nil {
            throw ControlServerError("a remote control API needs a token (--control-token-file FILE or FAULTLINE_CONTROL_TOKEN)")
        }
        if let token, token.isEmpty || token.contains(where: { $0 == " " || $0.isNewline }) {
            throw ControlServerError("control token must be non-empty, without spaces or line breaks")
        }
        let router = ControlRouter(token: token, loopbackOnly: loopback)
        return try ControlServer(loop: loop, host: host, port: port, router: router, backend: backend) {
            router.respond(to: $0, backend: backend)
        }
    }

    /// The toxiproxy-compatible API (`ToxiproxyRouter`) on `host:port`, loopback only unless
    /// `allowRemote`. Call on the loop thread.
    /// `allowRemoteListens`: the proxies it creates may listen on other addresses than
    /// loopback (`--control-allow-remote`); the API itself stays where `allowRemote` says.
    public static func startToxiproxy(loop: EventLoop, host: String = "127.0.0.1", port: Int, allowRemote: Bool = false,
                                      allowRemoteListens: Bool = false, backend: any ToxiproxyBackend) throws -> ControlServer {
        let loopback = LoopbackHost.isLoopback(host: host)
        guard loopback || allowRemote else {
            throw ControlServerError("toxiproxy API on \(host): not a loopback address; anyone who can reach it can break every proxied connection")
        }
        let router = ToxiproxyRouter(loopbackOnly: loopback, allowRemoteListens: allowRemoteListens)
        return try ControlServer(loop: loop, host: host, port: port, router: router.access, backend: nil) {
            router.respond(to: $0, backend: backend)
        }
    }

    private init(loop: EventLoop, host: String, port: Int, router: ControlRouter, backend: (any ControlBackend)?,
                 respond: @escaping (ControlRequest) -> ControlResponse) throws {
        self.loop = loop
        self.router = router
        self.backend = backend
        self.respond = respond
        var accept: ((TCPConnection) -> Void)?
        let listener: TCPListener
        do {
            listener = try TCPListener(loop: loop, host: host, port: port) { accept?($0) }
        } catch {
            throw ControlServerError("control API: \(error)")
        }
        self.listener = listener
        address = listener.localAddress
        self.port = listener.port
        accept = { [weak self] connection in self?.accept(connection) }
    }

    /// Stops listening; requests in flight are still answered. Idempotent.
    public func close() {
        listener?.close()
        listener = nil
    }

    /// Clients being served now (for tests).
    public var clientCount: Int { clients.count }

    private func accept(_ connection: TCPConnection) {
        let pending = clients.values.filter { !$0.answered }.count
        switch ConnectionAdmission(maxConnections: maxConnections, maxPending: maxConnections)
            .decide(open: clients.count, pending: pending) {
        case .admit: break
        case .refuse:
            connection.close()
            return
        case .admitEvictingOldestPending:
            evictOldestUnanswered()
        }
        let key = ObjectIdentifier(connection)
        let timer = loop.schedule(after: requestTimeout) { [weak connection] in connection?.close() }
        clients[key] = Client(connection: connection, reader: ControlRequestReader(maxBodyBytes: maxBodyBytes), timer: timer)
        arrivals.append(key)
        restartIdleTimer(key)
        connection.onRead = { [weak self, unowned connection] bytes in
            self?.restartIdleTimer(key)
            self?.read(bytes, on: connection)
        }
        connection.onEnd = { [weak self, unowned connection] end in
            // A client that half-closes after its request still gets the response; one that
            // ends before its request is complete gets nothing, at once.
            if end == .fin, self?.clients[key]?.answered == false { connection.close() }
        }
        connection.onClose = { [weak self] in
            guard let self, let client = clients.removeValue(forKey: key) else { return }
            client.timer?.cancel()
            client.idleTimer?.cancel()
            if arrivals.count > 2 * clients.count + 16 { arrivals.removeAll { clients[$0] == nil } }
        }
    }

    /// Closes the client that has waited longest without completing its request.
    private func evictOldestUnanswered() {
        while !arrivals.isEmpty {
            let key = arrivals.removeFirst()
            guard let client = clients[key], !client.answered else { continue }
            client.connection?.close()
            return
        }
    }

    /// A client still sending its request must send something every `idleTimeout`.
    private func restartIdleTimer(_ key: ObjectIdentifier) {
        guard var client = clients[key] else { return }
        client.idleTimer?.cancel()
        client.idleTimer = nil
        if !client.answered {
            client.idleTimer = loop.schedule(after: idleTimeout) { [weak connection = client.connection] in
                // Silent too long before finishing its request (an idle or slowloris client).
                connection?.close()
            }
        }
        clients[key] = client
    }

    private func read(_ bytes: [UInt8], on connection: TCPConnection) {
        let key = ObjectIdentifier(connection)
        guard var client = clients[key] else { return }
        let step = client.reader.feed(bytes)
        if case .needMore = step {} else {
            client.answered = true
            client.idleTimer?.cancel()
            client.idleTimer = nil
        }
        clients[key] = client
        switch step {
        case .needMore(let sendContinue):
            if sendContinue { connection.write(Array("HTTP/1.1 100 Continue\r\n\r\n".utf8)) }
        case .request(let request):
            if ControlRoute(path: request.path) == .events, request.method == "GET",
               router.checkAccess(request) == nil, stream(on: connection) { return }
            send(respond(request), on: connection)
        case .reject(let response):
            send(response, on: connection)
        }
    }

    /// `GET /events`: a 200 with no length, then one JSON object a line as the backend
    /// reports events, until the client goes away. The first line, `{"type":"watching"}`,
    /// says the stream is live. A client that stops reading is dropped once its queue passes
    /// the high-water mark, so it cannot make the proxy buffer without bound. False when the
    /// backend has no events (the router then answers).
    private func stream(on connection: TCPConnection) -> Bool {
        let key = ObjectIdentifier(connection)
        guard let backend, let id = backend.watch({ [weak connection] event in
            guard let connection, !connection.isClosed else { return }
            var line: [UInt8] = []
            JSONWriter.write(event, into: &line)
            line.append(10)
            connection.write(line)
            if connection.isOverHighWater { connection.reset() }
        }) else { return false }
        clients[key]?.timer?.cancel()
        clients[key]?.timer = nil
        let head = HTTPResponseHead(status: 200, reason: "OK", headers: [
            HeaderField("Content-Type", "application/x-ndjson"),
            HeaderField("Cache-Control", "no-store"),
            HeaderField("Connection", "close"),
        ])
        connection.write(head.serialized + Array(#"{"type":"watching"}"#.utf8) + [10])
        let previous = connection.onClose
        connection.onClose = {
            backend.unwatch(id)
            previous?()
        }
        connection.onEnd = { [unowned connection] _ in connection.close() }
        return true
    }

    private func send(_ response: ControlResponse, on connection: TCPConnection) {
        let head = HTTPResponseHead(
            status: response.status, reason: ControlResponse.reason(response.status),
            headers: response.headers + [
                HeaderField("Content-Length", String(response.body.count)),
                HeaderField("Cache-Control", "no-store"),
                HeaderField("Connection", "close"),
            ])
        connection.write(head.serialized + response.body)
        connection.closeAfterFlush()
    }
}

/// Why the control API could not start, worded for the command line.
public struct ControlServerError: Error, Sendable, CustomStringConvertible {
    public var message: String
    public init(_ message: String) { self.message = message }
    public var description: String { message }
}
