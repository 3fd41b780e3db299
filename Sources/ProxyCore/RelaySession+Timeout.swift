import Capture
import Vocabulary
import WebSocket

/// Ending a pair that has not finished its handshake: at the handshake deadline
/// (`RelayConfig.handshakeTimeout`), so a client that sends its upgrade request a byte at a
/// time, or nothing at all, or an upstream that never answers, holds a slot only until then;
/// or when the shell evicts it to make room for a new client (`ConnectionAdmission`).
extension RelaySession {
    /// Before the WebSocket is open (or the upstream's refusal is being relayed).
    public var isHandshaking: Bool {
        switch phase {
        case .awaitingRequest, .connecting, .awaitingResponse: true
        default: false
        }
    }

    mutating func handshakeTimedOut(now: Micros, into out: inout [RelayCommand]) {
        let seconds = Self.secondsText(config.handshakeTimeout)
        if phase == .awaitingRequest {
            abandonHandshake(reason: "handshake timeout: no complete upgrade request from the client within \(seconds) "
                + "(\(requestParser.bufferedByteCount) bytes received; see --handshake-timeout)", status: 408,
                now: now, into: &out)
        } else {
            abandonHandshake(reason: "handshake timeout: the upstream did not answer the upgrade within \(seconds) "
                + "(see --handshake-timeout)", status: 504, now: now, into: &out)
        }
    }

    /// The shell closes this pending pair to admit a new client (every slot or every pending
    /// slot was taken). Does nothing once the handshake is over.
    public mutating func evict(reason: String, now: Micros) -> [RelayCommand] {
        guard isHandshaking else { return [] }
        var out: [RelayCommand] = []
        abandonHandshake(reason: reason, status: 503, now: now, into: &out)
        return out
    }

    /// Ends a pair still in its handshake: a note, the end recorded with the reason (the
    /// client's stream while its request is incomplete, else the upstream's), and an HTTP
    /// answer to the client (`status`, or 504 when the upstream is the one being waited for).
    mutating func abandonHandshake(reason: String, status: Int, now: Micros, into out: inout [RelayCommand]) {
        clock = now   // `evict` comes from outside `handle`: the ends are recorded at this time
        out.append(note(.warning, reason + "; closed", now: now))
        if phase == .awaitingRequest {
            out.append(.send(to: .client, bytes: HTTPReplies.response(status: status, body: "faultline: \(reason)")))
            recordProxyEnd(towards: .client, kind: .fin, detail: reason, into: &out)
            finishBeforeUpstream(into: &out)
        } else {
            recordProxyEnd(towards: .server, kind: .fin, detail: reason, into: &out)
            answerUpgrade(status: status == 408 ? 504 : status, body: "faultline: \(reason)", now: now, into: &out)
            finish(into: &out)
        }
    }

    /// "10 s", "2.5 s".
    static func secondsText(_ micros: Micros) -> String {
        micros % 1_000_000 == 0 ? "\(micros / 1_000_000) s" : "\(Double(micros) / 1_000_000) s"
    }
}
