import Capture
import ProxyCore
import Transport
import Vocabulary
import WebSocket

/// Forward mode's front door (`faultline proxy --forward`): each accepted connection is an
/// HTTP proxy client. Its first request decides (`ProxyRequestRouter`) where it goes:
/// - `CONNECT host:port`: 200, then the tunnel's first bytes tell TLS from plain text. TLS
///   is intercepted with a certificate minted for the host (`TLSLeafMinter`), unless the
///   host is a `--passthrough` one or there is no CA: then it is an opaque `ForwardTunnel`.
///   Inside the tunnel (after TLS, or plain) the next request is read again.
/// - a WebSocket upgrade (absolute-form, or inside a tunnel): the proxy's ordinary
///   `RelayPair`, with the request's host as its upstream; recording, faults, live
///   analysis and the control API see it as any other connection.
/// - any other request: a `ForwardHTTPExchange`, relayed and recorded as an `http` record.
///
/// Loop-bound, as the `ProxyServer` that owns it.
package final class ForwardProxy {
    package unowned let server: ProxyServer
    package let settings: ForwardSettings
    /// Nil without `--tls-ca`: TLS tunnels then pass through untouched.
    package let minter: TLSLeafMinter?
    /// Connections whose first request is still being read (and tunnels and exchanges in
    /// flight): kept alive here until they are handed to a relay or end.
    private var clients: [Int: ForwardClient] = [:]
    package private(set) var tunnels: [ConnectionID: ForwardTunnel] = [:]
    package private(set) var exchanges: [ConnectionID: ForwardHTTPExchange] = [:]
    private var nextClient = 0

    package init(server: ProxyServer, settings: ForwardSettings) {
        self.server = server
        self.settings = settings
        // The CA was checked when the flags were read; a failure here cannot happen in practice.
        minter = settings.authority.flatMap { try? TLSLeafMinter(authority: $0) }
    }

    /// Connections being routed, tunnels and exchanges count against `--max-connections`
    /// with the relayed pairs; past it a client gets a 503 that says why.
    package func accept(_ connection: TCPConnection) {
        let open = clients.count + tunnels.count + exchanges.count + server.openConnections
        guard open < server.settings.maxConnections else {
            let message = "too many connections (limit \(server.settings.maxConnections), see --max-connections)"
            connection.write(ProxyRequestRouter.rejection(status: 503, message: "faultline: " + message))
            connection.onRead = { _ in }
            connection.closeAfterFlush()
            note(.warning, "refused a connection from \(connection.remoteAddress): \(message)")
            return
        }
        track(ForwardClient(proxy: self, stream: connection, tcp: connection, tunnel: nil))
    }

    package func track(_ client: ForwardClient) {
        nextClient += 1
        client.key = nextClient
        clients[nextClient] = client
    }

    package func forget(_ client: ForwardClient) { clients[client.key] = nil }
    package func track(_ tunnel: ForwardTunnel) { tunnels[tunnel.id] = tunnel }
    package func forget(_ tunnel: ForwardTunnel) { tunnels[tunnel.id] = nil }
    package func track(_ exchange: ForwardHTTPExchange) { exchanges[exchange.id] = exchange }
    package func forget(_ exchange: ForwardHTTPExchange) { exchanges[exchange.id] = nil }

    /// Proxy shutdown: open tunnels and exchanges get their closing records.
    package func captureEnded(now: Micros) {
        for id in tunnels.keys.sorted() { tunnels[id]?.finish(detail: "the proxy stopped") }
        for id in exchanges.keys.sorted() { exchanges[id]?.finish(error: "the proxy stopped") }
    }

    package func note(_ level: NoteRecord.Level, _ message: String, conn: ConnectionID? = nil) {
        server.record(.note(NoteRecord(conn: conn, t: server.now, level: level, message: message)))
        if level != .info { server.live?.problem(message) }
    }
}

/// One forward-proxy connection while its request is read and routed; handed on to a relay
/// pair, a tunnel, an HTTP exchange or a TLS handshake (then a new `ForwardClient` reads
/// the first request inside it).
package final class ForwardClient {
    package unowned let proxy: ForwardProxy
    package var key = 0
    package let stream: any ByteStream
    /// The raw socket when `stream` is it (needed to start TLS or a tunnel on it).
    package let tcp: TCPConnection?
    /// Inside a CONNECT tunnel: where it goes (requests are then in origin form).
    package let tunnel: ForwardTarget?

    private enum State {
        case readingHead
        case classifying(ForwardTarget, [UInt8])
        case handedOff
    }

    private var state = State.readingHead {
        didSet {
            if case .handedOff = state {
                deadline?.cancel()
                deadline = nil
            }
        }
    }
    private var parser = HTTPHeadParser()
    private var deadline: TimerHandle?

    package init(proxy: ForwardProxy, stream: any ByteStream, tcp: TCPConnection?, tunnel: ForwardTarget?, firstBytes: [UInt8] = []) {
        self.proxy = proxy
        self.stream = stream
        self.tcp = tcp
        self.tunnel = tunnel
        stream.onRead = { [unowned self] in received($0) }
        stream.onEnd = { [unowned self] _ in
            guard case .handedOff = state else {
                state = .handedOff
                stream.close()
                return
            }
        }
        stream.onDrain = nil
        stream.onClose = { [unowned self] in
            state = .handedOff
            proxy.forget(self)
        }
        deadline = proxy.server.loop.schedule(after: proxy.settings.headTimeout) { [weak self] in self?.timedOut() }
        if !firstBytes.isEmpty { received(firstBytes) }
    }

    private func timedOut() {
        deadline = nil
        if case .handedOff = state { return }
        state = .handedOff
        proxy.note(.warning, "forward proxy: \(stream.remoteAddress) sent no complete request within \(proxy.settings.headTimeout / 1_000_000) s; closed")
        stream.close()
    }

    private func received(_ bytes: [UInt8]) {
        switch state {
        case .readingHead:
            parser.append(bytes)
            readHead()
        case .classifying(let target, let buffered):
            state = .classifying(target, buffered + bytes)
            classify()
        case .handedOff:
            break
        }
    }

    private func readHead() {
        let parsed: HTTPRequestHead?
        do {
            parsed = try parser.parseRequest()
        } catch {
            reject(status: error.status, message: "faultline: \(error.message)")
            return
        }
        guard let request = parsed else { return }
        let rest = parser.remainder
        if let tunnel {
            // Inside a tunnel: origin form as a server would get it (an absolute URL is
            // tolerated and turned into origin form; the tunnel's target stays the upstream).
            var inner = request
            if case .forward(_, let rewritten) = ProxyRequestRouter.route(request) { inner = rewritten }
            dispatch(inner, to: tunnel, rest: rest)
            return
        }
        switch ProxyRequestRouter.route(request) {
        case .reject(let status, let message):
            reject(status: status, message: message)
        case .forward(let target, _) where refusesLoop(to: target), .connect(let target) where refusesLoop(to: target):
            return
        case .forward(let target, let rewritten):
            dispatch(rewritten, to: target, rest: rest)
        case .connect(let target):
            if ProxyRequestRouter.isPassthrough(target.host, patterns: proxy.settings.passthrough) {
                startTunnel(target, bytes: rest, detail: "--passthrough", replied: false)
                return
            }
            stream.write(ProxyRequestRouter.connectEstablished)
            state = .classifying(target, rest)
            classify()
        }
    }

    /// The tunnel's first bytes: a TLS ClientHello is intercepted (or tunnelled without a
    /// CA); anything else is plain HTTP, read as the tunnel's first request.
    private func classify() {
        guard case .classifying(let target, let bytes) = state, let tcp else { return }
        guard let isTLS = ProxyRequestRouter.looksLikeTLS(bytes) else { return }
        guard isTLS else {
            state = .handedOff
            proxy.forget(self)
            proxy.track(ForwardClient(proxy: proxy, stream: tcp, tcp: tcp, tunnel: target, firstBytes: bytes))
            return
        }
        guard let minter = proxy.minter else {
            startTunnel(target, bytes: bytes, detail: "TLS, and no --tls-ca to intercept it", replied: true)
            return
        }
        let context: TLSContext
        do {
            context = try minter.context(for: target.host)
        } catch {
            proxy.note(.error, "cannot make a certificate for \(target.host): \(error.message)")
            state = .handedOff
            tcp.close()
            return
        }
        state = .handedOff
        proxy.forget(self)
        let proxy = self.proxy
        let secure = ForwardTarget(host: target.host, port: target.port, secure: true)
        TLSConnection.server(over: tcp, context: context, initialBytes: bytes) { result in
            switch result {
            case .success(let tls):
                proxy.track(ForwardClient(proxy: proxy, stream: tls, tcp: nil, tunnel: secure))
            case .failure(let error):
                // Typically the client does not trust the CA, or pins the real certificate.
                proxy.note(.warning, "TLS interception of \(target.authority) failed: \(error.message) "
                           + "(does the client trust the --tls-ca certificate? a pinning client needs --passthrough \(target.host))")
            }
        }
    }

    private func dispatch(_ request: HTTPRequestHead, to target: ForwardTarget, rest: [UInt8]) {
        state = .handedOff
        proxy.forget(self)
        if request.headers.containsToken("websocket", inHeadersNamed: "Upgrade") {
            proxy.server.admit(stream, target: target, hostHeader: request.headers.first(named: "Host"),
                               firstBytes: request.serialized + rest)
        } else {
            let exchange = ForwardHTTPExchange(proxy: proxy, client: stream, target: target, request: request, rest: rest)
            proxy.track(exchange)
            exchange.start()
        }
    }

    private func startTunnel(_ target: ForwardTarget, bytes: [UInt8], detail: String, replied: Bool) {
        guard let tcp else { return }
        state = .handedOff
        proxy.forget(self)
        let tunnel = ForwardTunnel(proxy: proxy, client: tcp, target: target, firstBytes: bytes, detail: detail, replied: replied)
        proxy.track(tunnel)
        tunnel.start()
    }

    /// Answers 508 when `target` is a listener of this process's proxies (this one, say):
    /// relaying there would bring the request back in, again and again.
    private func refusesLoop(to target: ForwardTarget) -> Bool {
        let address = HostPort(host: target.host, port: target.port)
        guard let own = ProxyListeners.process.withLock({ $0.listener(reachedBy: address) }) else { return false }
        reject(status: 508, message: "faultline: loop detected: the target \(target.authority) is this process's own proxy "
                   + "listener \(own); relaying there would loop")
        return true
    }

    private func reject(status: Int, message: String) {
        state = .handedOff
        stream.write(ProxyRequestRouter.rejection(status: status, message: message))
        proxy.note(.warning, "forward proxy: \(message) (answered \(status))")
        stream.closeAfterFlush()
    }
}
