import Capture
import ProxyCore
import Transport
import WebSocket

/// Reverse mode with `--route`: reads a client's request head, picks the route by its
/// `Host` and path (`UpstreamRoutes`), then hands the connection and the bytes read to the
/// ordinary relay with that route's upstream. No route and no `--upstream`: a 404 that
/// names the host and path. Alive through its stream's callbacks until it hands off.
package final class RouteReader {
    private unowned let server: ProxyServer
    private let stream: any ByteStream
    private var parser = HTTPHeadParser()
    /// Everything read so far (the parser stops at its head limit, so this is bounded too).
    private var read: [UInt8] = []
    private var done = false

    package init(server: ProxyServer, stream: any ByteStream) {
        self.server = server
        self.stream = stream
    }

    package func start() {
        // The closures hold the reader until the relay takes the callbacks over.
        stream.onRead = { [self] in received($0) }
        stream.onEnd = { [self] _ in
            done = true
            stream.close()
        }
        stream.onClose = { [self] in
            stream.onRead = nil
            stream.onEnd = nil
            stream.onClose = nil
            _ = self
        }
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
            done = true
            let message = "no --route for Host \(host ?? "(none)") and path \(request.target)"
            stream.write(ProxyRequestRouter.rejection(status: 404, message: "faultline: " + message))
            server.record(.note(NoteRecord(conn: nil, t: server.now, level: .warning, message: message + " (answered 404)")))
            server.live?.problem(message)
            stream.closeAfterFlush()
        }
    }

    private func handOff(upstream: UpstreamURL) {
        done = true
        let bytes = read
        read = []
        stream.onClose = nil
        server.admit(stream, target: ForwardTarget(host: upstream.host, port: upstream.port, secure: upstream.secure),
                     hostHeader: upstream.hostHeader, pathPrefix: upstream.pathPrefix, firstBytes: bytes)
    }
}
