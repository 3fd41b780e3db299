import Capture
import Faults
import Vocabulary

/// Connections that are not HTTP at all (a database or cache client sent to a toxiproxy-style
/// proxy): an HTTP request starts with a method token, upper-case ASCII letters, so a first
/// byte that is anything else means plain TCP. The bytes are relayed both ways as they come,
/// FIN for FIN and RST for RST; the capture holds the connection's open, a note saying it
/// was relayed as plain TCP, its ends, and the byte counts each way (not the bytes). Faults
/// act on WebSocket connections only.
extension RelaySession {
    static func canStartHTTPRequest(_ first: UInt8) -> Bool { (65...90).contains(first) }

    mutating func startPlainTCP(_ bytes: [UInt8], now: Micros, into out: inout [RelayCommand]) {
        phase = .plainTCP(connected: false)
        earlyClientBytes = bytes
        let first = bytes.first.map { String($0, radix: 16) } ?? "?"
        out.append(note(.info, "the client's first byte (0x\(first)) cannot start an HTTP request: relaying plain TCP, bytes as they come", now: now))
        out.append(.pauseReading(.client))
        out.append(.connectUpstream)
    }

    mutating func plainUpstreamConnected(into out: inout [RelayCommand]) {
        phase = .plainTCP(connected: true)
        let early = earlyClientBytes
        earlyClientBytes = []
        if !early.isEmpty {
            plainCounts.client += early.count
            out.append(.send(to: .server, bytes: early))
        }
        out.append(.resumeReading(.client))
    }

    mutating func plainBytes(from side: Side, _ bytes: [UInt8], into out: inout [RelayCommand]) {
        guard case .plainTCP(let connected) = phase else { return }
        guard connected else {
            earlyClientBytes += bytes   // the client is paused meanwhile: at most a read or two
            return
        }
        if side == .client { plainCounts.client += bytes.count } else { plainCounts.server += bytes.count }
        out.append(.send(to: side.other, bytes: bytes))
    }

    mutating func plainEnded(_ side: Side, kind: EndKind, now: Micros, into out: inout [RelayCommand]) {
        guard case .plainTCP(let connected) = phase else { return }
        if kind == .fin, connected, !(client.readEnded && server.readEnded) {
            shutdownSocket(side.other, into: &out)   // the FIN passed on, recorded on its leg
            return
        }
        out.append(note(.info, "plain TCP relayed \(plainCounts.client) bytes client to server, \(plainCounts.server) server to client", now: now))
        if kind == .fin { finish(into: &out) } else { abort(after: side, into: &out) }
    }
}
