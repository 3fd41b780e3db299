import CLI
import Capture
import Faults
import JSON
import Protocols
import ProxyCore

/// `--live`: one line on standard error per lifecycle-relevant event, for a person watching
/// a QA session: connection open, upgrade answer, handshake with its socket id,
/// subscribe/subscribed, close frames with code and sender, TCP drops and resets, faults
/// fired, and the proxy's own warnings. `-v` adds a debug line for every other record.
///
///     +3.201455 conn 2 open from 127.0.0.1:51234
///     +3.204127 conn 2 handshake socket_id=123.456 activity_timeout=120
///     +9.000312 conn 2 fault close:4009,after=5s: sent close 4009 'terminated' to client
///     +9.000390 conn 2 close 4009 'terminated' from server (injected)
package struct LiveView {
    package var lifecycle: Bool
    package var verbose: Bool
    /// Where lines go; standard error by default, a closure in tests. Lines are escaped
    /// (`TerminalText`) before they get here.
    package var emit: (String) -> Void = { Console.err($0 + "\n") }

    package init(lifecycle: Bool, verbose: Bool) {
        self.lifecycle = lifecycle
        self.verbose = verbose
    }

    package func show(_ record: CaptureRecord) {
        if let line = lifecycleLine(record) {
            if lifecycle || verbose { emit(TerminalText.escape(prefix(record) + line)) }
        } else if verbose, let line = debugLine(record) {
            emit(TerminalText.escape(prefix(record) + "debug: " + line))
        }
    }

    /// Problems of the shell itself (always shown).
    package func problem(_ message: String) {
        emit(TerminalText.escape("faultline proxy: \(message)"))
    }

    private func prefix(_ record: CaptureRecord) -> String {
        let t = record.time ?? 0
        let conn = record.connection.map { "conn \($0) " } ?? ""
        return "+\(LiveTime.seconds(t)) \(conn)"
    }

    package func lifecycleLine(_ record: CaptureRecord) -> String? {
        switch record {
        case .header:
            return nil
        case .open(let open):
            return "open from \(open.client)"
        case .upgrade(let upgrade):
            guard upgrade.from == .server, let status = upgrade.status else { return nil }
            return status == 101 ? "upgraded (101)" : "upgrade refused: \(status) \(upgrade.reason ?? "")"
        case .frame(let frame):
            return frameLine(frame)
        case .end(let end) where end.byProxy:
            // The proxy's own end towards a peer (a FIN passed on, a fault's drop or reset).
            let peer = end.side.other.rawValue
            switch end.kind {
            case .fin: return "proxy closed TCP to the \(peer) (FIN)"
            case .rst: return "proxy reset the \(peer)'s connection (RST)"
            case .error, .captureEnd: return nil
            }
        case .end(let end):
            switch end.kind {
            case .fin: return "\(end.side.rawValue) closed TCP (FIN)"
            case .rst: return "\(end.side.rawValue) reset the connection (RST)"
            case .error: return "\(end.side.rawValue) connection failed: \(end.detail ?? "error")"
            case .captureEnd: return "\(end.side.rawValue) still open when the proxy stopped"
            }
        case .fault(let fault):
            return "fault \(fault.rule): \(fault.detail)"
        case .note(let note):
            // The relay's choice of the connection's protocol entry, and why.
            if ProtocolChoiceNote.matches(note) { return note.message }
            return note.level == .info ? nil : "\(note.level.rawValue): \(note.message)"
        case .tunnel(let tunnel):
            return tunnel.event == .open ? "tunnel to \(tunnel.target) (not intercepted: \(tunnel.detail ?? "opaque"))"
                : "tunnel ended: \(tunnel.bytesUp ?? 0) bytes up, \(tunnel.bytesDown ?? 0) down"
        case .http(let http):
            return "http \(http.method) \(http.url) -> \(http.status.map(String.init) ?? http.error ?? "no response")"
        }
    }

    private func frameLine(_ frame: FrameRecord) -> String? {
        let fate = frame.action == .forwarded ? "" : " (\(frame.action.name)\(frame.fault.map { " by \($0)" } ?? ""))"
        if frame.opcode == .close {
            let code = frame.closeCode.map(String.init) ?? "without code"
            let reason = frame.closeReason.map { $0.isEmpty ? "" : " '\($0)'" } ?? ""
            return "close \(code)\(reason) from \(frame.from.rawValue)\(fate)"
        }
        // The event the relay decoded once and the record carries, read by its kind (so
        // any dialect, any prefix, any protocol entry).
        guard frame.opcode == .text, let decoded = frame.decoded.event else { return nil }
        let event = decoded.name
        // Spelled only for a line: nearly every frame (client events, pings) shows none, and
        // building " channel" for each cost the relay a string per frame.
        var on: String {
            (decoded.channel ?? decoded.dataMember("channel")?.stringValue).map { " \($0)" } ?? ""
        }
        switch decoded.kind {
        case .connectionEstablished:
            let socketID = decoded.socketID ?? "(none)"
            let timeout = decoded.dataMember("activity_timeout").map(Self.text) ?? "(none)"
            return "handshake socket_id=\(socketID) activity_timeout=\(timeout)\(fate)"
        case .subscribe, .unsubscribe, .signin:
            return "\(frame.from.rawValue) \(event)\(on)\(fate)"
        case .subscriptionSucceeded:
            return "subscribed\(on)\(fate)"
        case .subscriptionError, .error, .signinSuccess:
            return "\(frame.from.rawValue) \(event)\(on)\(decoded.data?.objectValue.map { " " + JSONWriter.serialize(.object($0)) } ?? "")\(fate)"
        case .ping, .pong, .memberAdded, .memberRemoved, .clientEvent, .other:
            return nil
        }
    }

    package static func text(_ value: JSONValue) -> String {
        value.stringValue ?? JSONWriter.serialize(value)
    }

    private func debugLine(_ record: CaptureRecord) -> String? {
        switch record {
        case .frame(let frame):
            return "frame \(frame.opcode) from \(frame.from.rawValue) fin=\(frame.fin) len=\(frame.length) \(frame.action.name)"
                + (frame.fault.map { " by \($0)" } ?? "")
                + (frame.protocolError.map { " protocol error: \($0)" } ?? "")
        case .upgrade(let upgrade):
            return upgrade.from == .client ? "upgrade request \(upgrade.method ?? "") \(upgrade.target ?? "")" : nil
        case .note(let note):
            return note.message
        default:
            return nil
        }
    }
}
