import Capture
import Faults
import Vocabulary
import WebSocket

/// The HTTP/1.1 part: the client's request, the upstream connection, the server's response.
extension RelaySession {
    mutating func clientBytes(_ bytes: [UInt8], now: Micros, into out: inout [RelayCommand]) {
        switch phase {
        case .awaitingRequest:
            if !sawClientBytes, let first = bytes.first, !Self.canStartHTTPRequest(first) {
                startPlainTCP(bytes, now: now, into: &out)
                return
            }
            sawClientBytes = sawClientBytes || !bytes.isEmpty
            requestParser.append(bytes)
            readRequest(now: now, into: &out)
        case .connecting, .awaitingResponse, .relayingRefusal:
            earlyClientBytes += bytes
        case .open, .faultClosing:
            receiveFrames(from: .client, bytes, now: now, into: &out)
        case .plainTCP:
            plainBytes(from: .client, bytes, into: &out)
        case .closingTCP, .finished:
            break
        }
    }

    mutating func serverBytes(_ bytes: [UInt8], now: Micros, into out: inout [RelayCommand]) {
        switch phase {
        case .awaitingResponse:
            responseBytes += bytes
            responseParser.append(bytes)
            readResponse(now: now, into: &out)
        case .relayingRefusal(let remaining):
            relayRefusalBody(bytes, remaining: remaining, into: &out)
        case .open, .faultClosing:
            receiveFrames(from: .server, bytes, now: now, into: &out)
        case .plainTCP:
            plainBytes(from: .server, bytes, into: &out)
        case .awaitingRequest, .connecting, .closingTCP, .finished:
            break
        }
    }

    mutating func readRequest(now: Micros, into out: inout [RelayCommand]) {
        let parsed: HTTPRequestHead?
        do {
            parsed = try requestParser.parseRequest()
        } catch {
            out.append(note(.warning, "unparseable request from the client: \(error.message); answered \(error.status)", now: now))
            out.append(.send(to: .client, bytes: HTTPReplies.response(status: error.status, body: "faultline: \(error.message)")))
            finishBeforeUpstream(into: &out)
            return
        }
        guard let request = parsed else { return }
        self.request = request
        out.append(.record(.upgrade(UpgradeRecord(conn: conn, t: now, from: .client, method: request.method,
                                                  target: request.target, headers: request.headers))))
        if let violation = request.forwardingViolation {
            // Never forwarded: the upstream might read it differently (header injection, smuggling).
            out.append(note(.warning, "refused a request from the client: \(violation); answered 400", now: now))
            answerUpgrade(status: 400, body: "faultline: bad request: \(violation)", now: now, into: &out)
            finishBeforeUpstream(into: &out)
            return
        }
        if let pseudonym = config.viaPseudonym, ViaHeader.names(pseudonym, in: request.headers) {
            // This proxy already forwarded this request: its upstream leads back to itself.
            out.append(note(.error, "refused a request that names this proxy (\(pseudonym)) in its Via header: its upstream "
                                + "\(upstreamAddress) leads back to this proxy (a loop); answered 508", now: now))
            answerUpgrade(status: 508, body: "faultline: loop detected: this request already passed through this proxy "
                          + "(Via: \(pseudonym)); its upstream \(upstreamAddress) leads back to it", now: now, into: &out)
            finishBeforeUpstream(into: &out)
            return
        }
        guard request.isWebSocketUpgrade else {
            let rejection = HTTPReplies.rejection(of: request)
            out.append(note(.warning, "not a WebSocket upgrade: \(request.method) \(request.target); answered \(rejection.status)", now: now))
            out.append(probeNote("sent no WebSocket upgrade request", now: now))
            out.append(.send(to: .client, bytes: HTTPReplies.response(status: rejection.status, body: rejection.message,
                                                                       extraHeaders: rejection.headers)))
            finishBeforeUpstream(into: &out)
            return
        }
        earlyClientBytes = requestParser.remainder
        if var faults {
            let outcomes = faults.upgradeRequested(clientKey: ClientScopeText.derive(from: request),
                                                   host: request.headers.first(named: "Host"), path: request.target, now: now)
            self.faults = faults
            apply(outcomes, now: now, into: &out)
            if phase != .awaitingRequest {   // refused at the upgrade
                let early = earlyClientBytes
                earlyClientBytes = []
                if isFaultClosing, !early.isEmpty { receiveFrames(from: .client, early, now: now, into: &out) }
                return
            }
        }
        phase = .connecting
        out.append(.pauseReading(.client))
        out.append(.connectUpstream)
    }

    /// Marks a connection that never sent a WebSocket upgrade request (a load balancer's
    /// health check, a port probe): it is recorded like any other, but fault triggers do
    /// not count it (`conn=`, `every=` number only connections that sent an upgrade request),
    /// so `conn=1` still means the first real client. The note's text starts with "probe:".
    func probeNote(_ what: String, now: Micros) -> RelayCommand {
        note(.info, "probe: the connection \(what); not counted by the fault triggers conn= and every=", now: now)
    }

    /// Ends a pair that never reached the upstream: only the client's socket exists.
    mutating func finishBeforeUpstream(into out: inout [RelayCommand]) {
        phase = .finished
        closeSocket(.client, into: &out)
        closedSockets.insert(.server)
    }

    /// The request as the upstream gets it: `Host` rewritten, the path prefix prepended,
    /// this proxy's `Via` appended (when it has a pseudonym), everything else as the client
    /// sent it.
    func upstreamRequest(_ request: HTTPRequestHead) -> HTTPRequestHead {
        var upstream = request
        upstream.target = config.upstreamPathPrefix + request.target
        if let index = upstream.headers.firstIndex(where: { $0.name.lowercased() == "host" }) {
            upstream.headers[index].value = config.upstreamHost
        } else {
            upstream.headers.insert(HeaderField("Host", config.upstreamHost), at: 0)
        }
        if let pseudonym = config.viaPseudonym { upstream.headers.append(ViaHeader.field(pseudonym)) }
        return upstream
    }

    mutating func upstreamConnected(now: Micros, into out: inout [RelayCommand]) {
        upstreamOpen = true
        if case .plainTCP = phase { return plainUpstreamConnected(into: &out) }
        guard phase == .connecting, let request else { return }
        phase = .awaitingResponse
        var upstream = upstreamRequest(request)
        askNoContextTakeover(&upstream, now: now, into: &out)
        out.append(.send(to: .server, bytes: upstream.serialized))
    }

    mutating func upstreamFailed(_ reason: String, now: Micros, into out: inout [RelayCommand]) {
        recordEnd(EndRecord(conn: conn, t: now, side: .server, kind: .error, detail: reason, leg: .upstream), into: &out)
        closedSockets.insert(.server)
        guard phase == .connecting || phase == .awaitingResponse else {
            finish(into: &out)
            return
        }
        out.append(note(.error, "upstream \(upstreamAddress) unreachable: \(reason); answered 502", now: now))
        answerUpgrade(status: 502, body: "faultline: cannot reach the upstream \(upstreamAddress): \(reason)", now: now, into: &out)
        finish(into: &out)
    }

    /// The proxy answers a WebSocket upgrade request itself (a 502, a refuse-http fault).
    /// To the client this is the server's response, so it is recorded as one: a reader sees
    /// a refused upgrade exactly as if the upstream had refused it.
    mutating func answerUpgrade(status: Int, body: String, now: Micros, into out: inout [RelayCommand]) {
        let reply = HTTPReplies.reply(status: status, body: body)
        out.append(.send(to: .client, bytes: reply.bytes))
        out.append(.record(.upgrade(UpgradeRecord(conn: conn, t: now, from: .server, status: reply.head.status,
                                                  reason: reply.head.reason, headers: reply.head.headers))))
    }

    mutating func readResponse(now: Micros, into out: inout [RelayCommand]) {
        let parsed: HTTPResponseHead?
        do {
            parsed = try responseParser.parseResponse()
        } catch {
            out.append(note(.error, "unparseable upgrade response from the upstream: \(error.message); answered 502", now: now))
            answerUpgrade(status: 502, body: "faultline: the upstream's response could not be parsed: \(error.message)",
                          now: now, into: &out)
            finish(into: &out)
            return
        }
        guard let response = parsed else { return }
        let remainder = responseParser.remainder
        var head = Array(responseBytes.prefix(responseBytes.count - remainder.count))
        responseBytes = []
        out.append(.record(.upgrade(UpgradeRecord(conn: conn, t: now, from: .server, status: response.status,
                                                  reason: response.reason, headers: response.headers))))
        if response.status == 101 { head = noContextTakeoverHead(response, head: head, now: now, into: &out) }
        out.append(.send(to: .client, bytes: head))
        guard response.status == 101 else {
            let length = response.headers.first(named: "Content-Length").flatMap { Int($0.trimmingCharacters(in: " ")) }
            out.append(note(.info, "upstream refused the upgrade with \(response.status) \(response.reason); relayed as is", now: now))
            phase = .relayingRefusal(remaining: length)
            relayRefusalBody(remainder, remaining: length, into: &out)
            return
        }
        openWebSocket(extensionsIn: response.headers, now: now, into: &out)
        if !remainder.isEmpty { receiveFrames(from: .server, remainder, now: now, into: &out) }
        let early = earlyClientBytes
        earlyClientBytes = []
        if !early.isEmpty, phase == .open { receiveFrames(from: .client, early, now: now, into: &out) }
    }

    /// Sets up validation and inflation for the agreed extensions and opens the relay.
    mutating func openWebSocket(extensionsIn headers: [HeaderField], now: Micros, into out: inout [RelayCommand]) {
        let deflate = DeflateParameters.negotiated(in: headers)
        client.recorder.negotiated(deflate)
        server.recorder.negotiated(deflate)
        phase = .open
        out.append(.resumeReading(.client))
        if var faults {
            let outcomes = faults.websocketOpened(now: now)
            self.faults = faults
            apply(outcomes, now: now, into: &out)
        }
    }

    mutating func relayRefusalBody(_ bytes: [UInt8], remaining: Int?, into out: inout [RelayCommand]) {
        guard let remaining else {
            if !bytes.isEmpty { out.append(.send(to: .client, bytes: bytes)) }
            return
        }
        let part = Array(bytes.prefix(remaining))
        if !part.isEmpty { out.append(.send(to: .client, bytes: part)) }
        let left = remaining - part.count
        if left == 0 { finish(into: &out) } else { phase = .relayingRefusal(remaining: left) }
    }
}
