import Capture
import ProxyCore
import Transport
import Vocabulary

/// An opaque CONNECT tunnel (a `--passthrough` host, or TLS with no CA to intercept it):
/// bytes relayed untouched both ways (`TCPRelay`), recorded as a `tunnel` open and end with
/// the byte counts, never as frames.
package final class ForwardTunnel {
    package unowned let proxy: ForwardProxy
    package let id: ConnectionID
    package let client: TCPConnection
    package let target: ForwardTarget
    private var firstBytes: [UInt8]
    private let detail: String
    /// Whether the client already got its 200 (else it gets it, or a 502, once the target answers).
    private let replied: Bool
    private var relay: TCPRelay?
    private var upstream: TCPConnection?
    private var attempt: ConnectAttempt?
    private var finished = false

    package init(proxy: ForwardProxy, client: TCPConnection, target: ForwardTarget, firstBytes: [UInt8], detail: String, replied: Bool) {
        self.proxy = proxy
        self.client = client
        self.target = target
        self.firstBytes = firstBytes
        self.detail = detail
        self.replied = replied
        id = proxy.server.takeConnectionID()
    }

    package func start() {
        let server = proxy.server
        server.record(.tunnel(TunnelRecord(conn: id, t: server.now, event: .open, client: client.remoteAddress,
                                           target: target.authority, detail: detail)))
        server.counters.connectionsTotal += 1
        // Bytes that arrive while connecting are kept for the target.
        client.onRead = { [unowned self] in firstBytes += $0 }
        client.onEnd = { [unowned self] _ in
            attempt?.cancel()
            attempt = nil
            client.close()
            finish(detail: "the client left before the target answered")
        }
        client.onClose = nil
        client.pauseReading()
        attempt = TCPConnector.connect(loop: server.loop, host: target.host, port: target.port,
                                       timeout: server.settings.upstreamConnectTimeout) { [unowned self] result in
            attempt = nil
            switch result {
            case .success(let connection): connected(connection)
            case .failure(let error):
                if !replied {
                    client.write(ProxyRequestRouter.rejection(status: 502, message: "faultline: cannot reach \(target.authority): \(error.message)"))
                }
                client.closeAfterFlush()
                finish(detail: "cannot reach the target: \(error.message)")
            }
        }
    }

    private func connected(_ connection: TCPConnection) {
        upstream = connection
        if !replied { client.write(ProxyRequestRouter.connectEstablished) }
        if !firstBytes.isEmpty { connection.write(firstBytes) }
        let relay = TCPRelay(client, connection)
        relay.onFinish = { [unowned self] in finish(detail: nil) }
        self.relay = relay
    }

    /// Records the end (once) and lets the tunnel go.
    package func finish(detail: String?) {
        guard !finished else { return }
        finished = true
        let server = proxy.server
        server.record(.tunnel(TunnelRecord(conn: id, t: server.now, event: .end, target: target.authority,
                                           bytesUp: firstBytes.count + (relay?.bytesAToB ?? 0),
                                           bytesDown: relay?.bytesBToA ?? 0, detail: detail)))
        relay?.onFinish = nil
        if relay == nil {   // the relay owns the sockets' callbacks once it exists
            client.onRead = nil
            client.onEnd = nil
        }
        proxy.forget(self)
    }
}
