import Capture
import ProxyCore
import Transport
import WebSocket

/// Reverse mode with `--route`: reads a client's request head, picks the route by its
/// `Host` and path (`UpstreamRoutes`), then hands the connection and the bytes read to the
/// ordinary relay with that route's upstream. No route and no `--upstream`: a 404 that
/// names the host and path. The client was admitted once, before this reads anything; it
/// counts as a pending connection until it is handed off (it may be evicted for a newer
/// client, as a pending pair may), and its head must arrive within `--handshake-timeout`.
/// Held by the server (`ProxyServer.routeReaders`) until it hands off or ends.
package final class RouteReader {
    private unowned let server: ProxyServer
    private let stream: any ByteStream
    /// The server's key for this reader.
    let key: Int
    private var parser = HTTPHeadParser()
    /// Everything read so far (the parser stops at its head limit, so this is bounded too).
    private var read: [UInt8] = []
    private var done = false
    private var deadline: TimerHandle?

    init(server: ProxyServer, stream: any ByteStream, key: Int) {
        self.server = server
        self.stream = stream
        self.key = key
    }

    func start() {
        // The closures hold the reader until the relay takes the callbacks over or the
        // stream closes (which lets them go).
        stream.onRead = { [self] in received($0) }
        stream.onEnd = { [self] _ in
            finish()
            stream.close()
        }
        stream.onClose = { [self] in
            finish()
            stream.onRead = nil
            stream.onEnd = nil
            stream.onClose = nil
        }
        let timeout = server.settings.handshakeTimeout
        deadline = server.loop.schedule(after: timeout) { [weak self] in
            self?.reject(status: 408, message: "no request head within \(Double(timeout) / 1_000_000) s (see --handshake-timeout)")
        }
    }

    /// Closed to make room for a newer client (`ConnectionAdmission`), with a 503 that says why.
    func evict(reason: String) {
        reject(status: 503, message: reason)
    }

    private func received(_ bytes: [UInt8]) {
        guard !done else { return }
        read += bytes
        parser.append(bytes)
        let request: HTTPRequestHead
        do {
            guard let parsed = try parser.parseRequest() else { return }
            request = parsed
        } catch {
            // The relay answers a bad request as it always does.
            handOff(upstream: server.settings.upstream)
            return
        }
        let host = request.headers.first(named: "Host")
        if let index = server.settings.routes.table.select(host: host, target: request.target) {
            handOff(upstream: server.settings.routes.upstreams[index])
        } else if server.settings.routes.hasDefault {
            handOff(upstream: server.settings.upstream)
        } else {
            reject(status: 404, message: "no --route for Host \(host ?? "(none)") and path \(request.target)", outcome: "answered 404")
        }
    }

    /// Answers `status` with `message`, notes it (and shows it live), and closes.
    private func reject(status: Int, message: String, outcome: String = "closed") {
        guard !done else { return }
        finish()
        stream.write(ProxyRequestRouter.rejection(status: status, message: "faultline: " + message))
        server.record(.note(NoteRecord(conn: nil, t: server.now, level: .warning, message: message + " (\(outcome))")))
        server.live?.problem(message)
        stream.onRead = { _ in }
        stream.closeAfterFlush()
    }

    /// Done reading: the timer is cancelled and the server forgets this reader (once).
    private func finish() {
        guard !done else { return }
        done = true
        deadline?.cancel()
        deadline = nil
        server.routeReaderEnded(self)
    }

    private func handOff(upstream: UpstreamURL) {
        let bytes = read
        read = []
        finish()
        stream.onClose = nil
        stream.onEnd = nil
        server.relay(stream, target: ForwardTarget(host: upstream.host, port: upstream.port, secure: upstream.secure),
                     hostHeader: upstream.hostHeader, pathPrefix: upstream.pathPrefix, firstBytes: bytes)
    }
}
