import Capture
import Vocabulary
import WebSocket

/// The opening handshake of a replayed connection, in either role.
extension ReplayScript {
    /// Headers that belong to one handshake only and are made afresh (or left out: the
    /// replay never negotiates compression, so recorded frames go out as they were read).
    static let perConnectionHeaders: Set<String> = [
        "sec-websocket-key", "sec-websocket-accept", "sec-websocket-extensions", "content-length", "host",
    ]

    /// Client role: the recorded request with a fresh key, our Host and target.
    mutating func sendRequest(now: Micros, into out: inout [ReplayAction]) {
        let recorded = recording.request
        let key = WebSocketHandshake.makeKey(using: &generator)
        let target = config.target ?? recorded?.target ?? "/"
        let extra = (recorded?.headers ?? []).filter {
            !Self.perConnectionHeaders.contains($0.name.lowercased())
                && !["upgrade", "connection", "sec-websocket-version"].contains($0.name.lowercased())
        }
        let request = WebSocketHandshake.request(host: config.host ?? recorded?.header("Host") ?? "localhost",
                                                 target: target, key: key, extraHeaders: extra)
        out.append(.write(request.serialized))
        phase = .awaitingResponse(key: key, deadline: now + config.connectTimeout)
    }

    /// Client role: the server's answer, compared with the recorded one.
    mutating func check(_ response: HTTPResponseHead, key: String, now: Micros, into out: inout [ReplayAction]) {
        let recordedStatus = recording.response?.status ?? 101
        if response.status == 101, let problem = WebSocketHandshake.problem(with: response, forKey: key) {
            report(.handshake, expected: "101", observed: "\(response.status): \(problem)", now: now, into: &out)
            finish(.close, into: &out)
            return
        }
        if response.status != recordedStatus {
            report(.handshake, expected: "HTTP \(recordedStatus)", observed: "HTTP \(response.status) \(response.reason)",
                   now: now, into: &out)
        }
        guard response.status == 101 else {
            finish(.close, into: &out)
            return
        }
        if recordedStatus != 101 {
            finish(.close, into: &out)   // the recording has nothing to play on an open connection
            return
        }
        open(now: now)
    }

    /// Server role: answers the live client's request as recorded.
    mutating func answer(_ request: HTTPRequestHead, now: Micros, into out: inout [ReplayAction]) {
        let recorded = recording.response
        let status = recorded?.status ?? 101
        let kept = (recorded?.headers ?? [HeaderField("Upgrade", "websocket"), HeaderField("Connection", "Upgrade")])
            .filter { !Self.perConnectionHeaders.contains($0.name.lowercased()) }
        guard status == 101 else {
            // Refused in the recording: refused again, with an empty body.
            let head = HTTPResponseHead(status: status, reason: recorded?.reason ?? "", headers: kept + [HeaderField("Content-Length", "0")])
            out.append(.write(head.serialized))
            finish(.close, into: &out)
            return
        }
        guard request.isWebSocketUpgrade else {
            report(.handshake, expected: "a WebSocket upgrade request", observed: "\(request.method) \(request.target) without the upgrade headers",
                   now: now, into: &out)
            let head = HTTPResponseHead(status: 400, reason: "Bad Request", headers: [HeaderField("Content-Length", "0"), HeaderField("Connection", "close")])
            out.append(.write(head.serialized))
            finish(.close, into: &out)
            return
        }
        let key = request.headers.first(named: "Sec-WebSocket-Key") ?? ""
        let head = HTTPResponseHead(status: 101, reason: recorded?.reason ?? "Switching Protocols",
                                    headers: kept + [HeaderField("Sec-WebSocket-Accept", WebSocketHandshake.acceptKey(for: key))])
        out.append(.write(head.serialized))
        open(now: now)
    }

    mutating func open(now: Micros) {
        phase = .open
        openedLive = now
        lastStep = (recordedStart, now)
    }

    mutating func report(_ kind: Deviation.Kind, expected: String?, observed: String?, now: Micros,
                         into out: inout [ReplayAction]) {
        out.append(.report(Deviation(kind: kind, copy: config.copy, conn: recording.conn, t: now,
                                     expected: expected, observed: observed)))
    }
}
