import ControlAPI
import JSON
import Transport
import WebSocket

/// The web UI's server, on the proxy's own event loop (or `faultline ui`'s): plain HTTP/1.1
/// for the page and its files (one request per connection, read by the control API's
/// `ControlRequestReader`), and the page's live socket, a WebSocket spoken with the
/// project's own codec. Decisions are elsewhere and pure (`UIAccess`, `UIRoutes`, `UIPage`,
/// `UIActions`); this moves bytes and time.
///
/// A slow or stalled browser never slows the relay: the model's upkeep is a few counters
/// per record, and pages are brought up to date at most every `flushInterval`, one
/// coalesced message each; a page whose socket still holds more than `pageQueueLimit`
/// bytes is skipped (it is told how many updates it missed) and caught up when its socket
/// drains. At most `maxPages` pages and `maxRequests` plain requests at once.
///
/// Loop thread only.
package final class UIServer {
    package static let maxPages = 8
    package static let maxRequests = 32
    package static let flushInterval: Int64 = 100_000
    package static let pageQueueLimit = 256 * 1024
    /// A page's messages are small (a filter, an action); larger ones close its socket.
    package static let maxMessageBytes = 64 * 1024
    /// Microseconds a plain client has to send its request.
    package static let requestTimeout: Int64 = 10_000_000

    package let loop: EventLoop
    package let model: UIModel
    /// The bound address, "127.0.0.1:PORT".
    package let address: String
    package let access: UIAccess
    private let actions: UIActions
    /// "live" for a proxy, "offline" for recorded captures.
    private let mode: String
    private var listener: TCPListener?
    private var pages: [ObjectIdentifier: PageSocket] = [:]
    private var requests: [ObjectIdentifier: TimerHandle] = [:]
    private var flushTimer: TimerHandle?

    /// One page's live socket.
    private final class PageSocket {
        let connection: TCPConnection
        var decoder = FrameDecoder(maxPayload: UIServer.maxMessageBytes)
        var page = UIPage()
        init(connection: TCPConnection) { self.connection = connection }
    }

    /// Listens on `host:port` (port 0: any free one). A host that is not loopback needs a
    /// token. `backend` is the running proxy (nil offline: no actions).
    package static func start(loop: EventLoop, host: String, port: Int, token: String?, model: UIModel,
                              backend: (any ControlBackend)?) throws(ControlServerError) -> UIServer {
        let loopback = LoopbackHost.isLoopback(host: host)
        if !loopback, token == nil {
            throw ControlServerError("the UI on \(host) is not on a loopback address: it needs a token, since anyone who reaches it can break every proxied connection")
        }
        if let token, token.isEmpty || !token.utf8.allSatisfy({ $0 > 32 && $0 < 127 && $0 != 59 && $0 != 38 }) {
            throw ControlServerError("the UI token must be printable ASCII without spaces, ';' or '&'")
        }
        return try UIServer(loop: loop, host: host, port: port, access: UIAccess(token: token, loopbackOnly: loopback),
                            model: model, backend: backend)
    }

    private init(loop: EventLoop, host: String, port: Int, access: UIAccess, model: UIModel,
                 backend: (any ControlBackend)?) throws(ControlServerError) {
        self.loop = loop
        self.model = model
        self.access = access
        actions = UIActions(backend: backend)
        mode = backend == nil ? "offline" : "live"
        var accept: ((TCPConnection) -> Void)?
        do {
            listener = try TCPListener(loop: loop, host: host, port: port) { accept?($0) }
        } catch {
            throw ControlServerError("UI: \(error)")
        }
        address = listener?.localAddress ?? "\(host):\(port)"
        accept = { [weak self] connection in self?.accept(connection) }
        model.onChange = { [weak self] in self?.scheduleFlush() }
    }

    /// Stops listening and closes every page. Idempotent.
    package func close() {
        listener?.close()
        listener = nil
        flushTimer?.cancel()
        flushTimer = nil
        for page in pages.values { page.connection.close() }
    }

    /// Pages open now (for tests and the bench).
    package var pageCount: Int { pages.count }
    /// Each open page's queued bytes and skipped updates (for tests and the bench).
    package var pageStates: [(queuedBytes: Int, skipped: Int)] {
        pages.values.map { ($0.connection.writeQueueBytes, $0.page.skipped) }
    }

    // MARK: Plain requests

    private func accept(_ connection: TCPConnection) {
        guard requests.count < Self.maxRequests else {
            connection.close()
            return
        }
        let key = ObjectIdentifier(connection)
        requests[key] = loop.schedule(after: Self.requestTimeout) { [weak connection] in connection?.close() }
        var reader = ControlRequestReader(maxBodyBytes: 1024)
        connection.onRead = { [weak self, unowned connection] bytes in
            guard let self else { return }
            switch reader.feed(bytes) {
            case .needMore: break
            case .reject(let response): send(response, on: connection)
            case .request(let request): serve(request, on: connection)
            }
        }
        connection.onEnd = { [unowned connection] _ in connection.close() }
        connection.onClose = { [weak self] in
            self?.requests.removeValue(forKey: key)?.cancel()
            self?.pages[key] = nil
        }
    }

    private func serve(_ request: ControlRequest, on connection: TCPConnection) {
        requests.removeValue(forKey: ObjectIdentifier(connection))?.cancel()
        guard request.path == UIRoutes.livePath else {
            send(UIRoutes.respond(to: request, access: access, model: model), on: connection)
            return
        }
        let head = HTTPRequestHead(method: request.method, target: request.path, headers: request.headers)
        guard head.isWebSocketUpgrade else {
            send(UIRoutes.text(426, "\(UIRoutes.livePath) is the page's WebSocket"), on: connection)
            return
        }
        switch access.check(path: request.path, query: request.query, headers: request.headers, needsOrigin: true) {
        case .allow: break
        case .setCookie:   // only plain requests are sent to get a cookie; a socket is refused
            return send(UIRoutes.text(401, "open the page first"), on: connection)
        case .refuse(let status, let message):
            return send(UIRoutes.text(status, message), on: connection)
        }
        guard pages.count < Self.maxPages else {
            send(UIRoutes.text(503, "\(Self.maxPages) pages are open already; close one"), on: connection)
            return
        }
        openPage(on: connection, head: head)
    }

    private func send(_ response: ControlResponse, on connection: TCPConnection) {
        let head = HTTPResponseHead(status: response.status, reason: ControlResponse.reason(response.status),
                                    headers: UIRoutes.securityHeaders + response.headers + [
                                        HeaderField("Content-Length", String(response.body.count)),
                                        HeaderField("Connection", "close"),
                                    ])
        connection.write(head.serialized + response.body)
        connection.closeAfterFlush()
    }

    // MARK: Pages

    private func openPage(on connection: TCPConnection, head: HTTPRequestHead) {
        let socket = PageSocket(connection: connection)
        let key = ObjectIdentifier(connection)
        pages[key] = socket
        connection.write(WebSocketHandshake.response(accepting: head).serialized)
        connection.onRead = { [weak self, unowned socket] bytes in self?.read(bytes, on: socket) }
        connection.onDrain = { [weak self, unowned socket] in
            guard let self, socket.page.isBehind(model) else { return }
            update(socket)
        }
        write(["type": "welcome", "mode": .string(mode), "spec": .string(model.spec.name),
               "fault_kinds": UIActions.faultKinds], to: socket)
    }

    private func read(_ bytes: [UInt8], on socket: PageSocket) {
        socket.decoder.append(bytes)
        while true {
            let frame: Frame
            do {
                guard let next = try socket.decoder.next() else { return }
                frame = next
            } catch {
                return fail(socket, code: 1009, reason: "message too large or unreadable")
            }
            switch frame.opcode {
            case .text where frame.fin:
                guard let message = try? JSONParser.parse(frame.payload) else {
                    return fail(socket, code: 1007, reason: "not a JSON message")
                }
                handle(message, from: socket)
            case .ping:
                socket.connection.write(FrameEncoder.encode(Frame(opcode: .pong, payload: frame.payload)))
            case .pong:
                break
            case .close:
                socket.connection.write(FrameEncoder.encode(Frame.close(code: 1000)))
                socket.connection.closeAfterFlush()
                return
            default:
                return fail(socket, code: 1003, reason: "only whole text messages are understood")
            }
        }
    }

    private func fail(_ socket: PageSocket, code: UInt16, reason: String) {
        socket.connection.write(FrameEncoder.encode(Frame.close(code: code, reason: reason)))
        socket.connection.closeAfterFlush()
    }

    private func handle(_ message: JSONValue, from socket: PageSocket) {
        if message["type"]?.stringValue == "action" {
            write(actions.perform(message, model: model), to: socket)
            // A pause or resume writes no record: the page sees its new state at once.
            if let action = message["action"]?.stringValue, UIIntercept.actions.contains(action) { update(socket) }
        } else if socket.page.receive(message) {
            update(socket)
        }
    }

    private func scheduleFlush() {
        guard flushTimer == nil, !pages.isEmpty else { return }
        flushTimer = loop.schedule(after: Self.flushInterval) { [weak self] in
            guard let self else { return }
            flushTimer = nil
            for socket in pages.values where socket.page.isBehind(model) { update(socket) }
        }
    }

    /// Sends the page its coalesced update, unless its socket is still full (then it is
    /// counted as skipped and sent once the socket drains).
    private func update(_ socket: PageSocket) {
        guard socket.connection.writeQueueBytes <= Self.pageQueueLimit else {
            socket.page.skipped += 1
            return
        }
        var message = socket.page.update(model)
        if let conn = socket.page.selected, var object = message.objectValue, let intercept = actions.interceptState(conn: conn) {
            object["intercept"] = intercept
            message = .object(object)
        }
        write(message, to: socket)
        if socket.page.isBehind(model) { scheduleFlush() }
    }

    private func write(_ message: JSONValue, to socket: PageSocket) {
        var payload: [UInt8] = []
        JSONWriter.write(message, into: &payload)
        socket.connection.write(FrameEncoder.encode(Frame(opcode: .text, payload: payload)))
    }
}
