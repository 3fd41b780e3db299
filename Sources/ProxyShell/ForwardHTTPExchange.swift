import Capture
import ProxyCore
import Transport
import Vocabulary
import WebSocket

/// One plain HTTP request through the forward proxy (an app's channel-auth endpoint, a REST
/// call), relayed and recorded as one `http` record when it is over.
///
/// One request per connection: the request goes upstream with `Connection: close`, the
/// response is relayed as it comes until the server closes, then the client's side closes
/// too (clients open a new connection for the next request, as HTTP/1.1 allows). Bodies
/// are relayed whole and kept in the record up to `ForwardSettings.bodyLimit` bytes each.
package final class ForwardHTTPExchange {
    package unowned let proxy: ForwardProxy
    package let id: ConnectionID
    package let client: any ByteStream
    package let target: ForwardTarget
    private let request: HTTPRequestHead
    private var pending: [UInt8]
    private let startedAt: Micros
    private var upstream: (any ByteStream)?
    private var cancelConnect: (() -> Void)?
    private var responseParser = HTTPHeadParser()
    private var response: HTTPResponseHead?
    private var requestBody: [UInt8] = []
    private var requestLength = 0
    private var responseBody: [UInt8] = []
    private var responseLength = 0
    private var finished = false

    package init(proxy: ForwardProxy, client: any ByteStream, target: ForwardTarget, request: HTTPRequestHead, rest: [UInt8]) {
        self.proxy = proxy
        self.client = client
        self.target = target
        var upstreamRequest = request
        upstreamRequest.headers.removeAll { $0.name.lowercased() == "connection" }
        upstreamRequest.headers.append(HeaderField("Connection", "close"))
        self.request = upstreamRequest
        pending = []
        id = proxy.server.takeConnectionID()
        startedAt = proxy.server.now
        pending = rest
        keepRequest(rest)
    }

    /// `https://host:port/path` as the record's `url`.
    package var url: String { "\(target.secure ? "https" : "http")://\(target.authority)\(request.target)" }

    package func start() {
        let server = proxy.server
        server.counters.connectionsTotal += 1
        client.onRead = { [unowned self] bytes in
            keepRequest(bytes)
            if let upstream { relay(bytes, to: upstream, from: client) } else { pending += bytes }
        }
        client.onEnd = { [unowned self] end in
            if case .fin = end, let upstream {
                upstream.shutdown()
            } else {
                finish(error: upstream == nil ? "the client left before the server answered" : "the client ended the exchange")
            }
        }
        client.onDrain = { [unowned self] in upstream?.resumeReading() }
        client.onClose = nil
        client.pauseReading()
        cancelConnect = StreamConnector.connect(loop: server.loop, host: target.host, port: target.port,
                                                tls: target.secure ? server.settings.upstreamTLS : nil,
                                                timeout: server.settings.upstreamConnectTimeout) { [unowned self] result in
            cancelConnect = nil
            switch result {
            case .success(let connection): connected(connection)
            case .failure(let error):
                client.write(ProxyRequestRouter.rejection(status: 502, message: "faultline: cannot reach \(target.authority): \(error.message)"))
                finish(error: "cannot reach \(target.authority): \(error.message)")
            }
        }
    }

    private func connected(_ connection: any ByteStream) {
        upstream = connection
        connection.onRead = { [unowned self] bytes in
            keepResponse(bytes)
            relay(bytes, to: client, from: connection)
        }
        connection.onEnd = { [unowned self] end in
            switch end {
            case .fin: finish(error: response == nil ? "the server closed without a response" : nil)
            case .reset: finish(error: "the server reset the connection")
            case .error(let reason): finish(error: "server: \(reason)")
            }
        }
        connection.onDrain = { [unowned self] in client.resumeReading() }
        connection.write(request.serialized + pending)
        pending = []
        client.resumeReading()
    }

    private func relay(_ bytes: [UInt8], to sink: any ByteStream, from source: any ByteStream) {
        sink.write(bytes)
        if sink.isOverHighWater { source.pauseReading() }
    }

    private func keepRequest(_ bytes: [UInt8]) {
        let (sum, overflow) = requestLength.addingReportingOverflow(bytes.count)
        requestLength = overflow ? Int.max : sum
        let room = proxy.settings.bodyLimit - requestBody.count
        if room > 0 { requestBody += bytes.prefix(room) }
    }

    private func keepResponse(_ bytes: [UInt8]) {
        var body = bytes[...]
        if response == nil {
            responseParser.append(bytes)
            do {
                guard let head = try responseParser.parseResponse() else { return }
                response = head
                body = responseParser.remainder[...]
            } catch {
                response = HTTPResponseHead(status: 0, reason: "unparseable: \(error.message)", headers: [])
                return
            }
        }
        let (sum, overflow) = responseLength.addingReportingOverflow(body.count)
        responseLength = overflow ? Int.max : sum
        let room = proxy.settings.bodyLimit - responseBody.count
        if room > 0 { responseBody += body.prefix(room) }
    }

    /// Records the exchange (once) and closes both sides after their queued bytes.
    package func finish(error: String?) {
        guard !finished else { return }
        finished = true
        cancelConnect?()
        cancelConnect = nil
        let server = proxy.server
        server.record(.http(HTTPRecord(conn: id, t: startedAt, tEnd: server.now, client: client.remoteAddress,
                                       method: request.method, url: url, requestHeaders: request.headers,
                                       requestBody: requestBody, requestLength: requestLength,
                                       status: response?.status, reason: response?.reason,
                                       responseHeaders: response?.headers ?? [], responseBody: responseBody,
                                       responseLength: responseLength, error: error)))
        // Nothing may call back into this exchange once the proxy lets go of it.
        for stream in [client, upstream].compactMap({ $0 }) {
            stream.onRead = nil
            stream.onEnd = nil
            stream.onDrain = nil
            stream.closeAfterFlush()
        }
        proxy.forget(self)
    }
}
