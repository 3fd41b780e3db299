import Capture
import Vocabulary
import WebSocket

/// How one side's part of a recorded connection ended, as the other side saw it.
public enum RecordedEnd: Sendable, Hashable {
    /// An orderly TCP FIN (or a plain close of the socket).
    case fin
    /// A TCP reset (a reset, a socket error, or a fault that reset the pair).
    case reset
}

/// One side's end: how and when (capture time).
public struct RecordedEnding: Sendable, Hashable {
    public var kind: RecordedEnd
    public var t: Micros
    public init(kind: RecordedEnd, t: Micros) { self.kind = kind; self.t = t }
}


/// One recorded connection, holding only what a replay needs: the upgrade, the frames each
/// peer really saw, and how each side's stream ended. Built from capture records by
/// `RecordedConnection.Builder`.
public struct RecordedConnection: Sendable, Hashable {
    public var conn: ConnectionID
    public var openedAt: Micros
    /// The client's address as recorded ("10.0.0.7:51234").
    public var clientAddress: String
    public var request: UpgradeRecord?
    public var response: UpgradeRecord?
    /// Frames in capture order (both directions), with what the proxy did with them.
    public var frames: [FrameRecord]
    /// How the client's stream ended (as the server saw it), if recorded.
    public var clientEnd: RecordedEnding?
    /// How the server's stream ended (as the client saw it), if recorded.
    public var serverEnd: RecordedEnding?
    /// The last time anything happened on the connection.
    public var lastActivity: Micros
    /// The client this connection belongs to, as `faultline analyze` names it (`client-2`)
    /// and its grouping key; set by `ReplayLoader`.
    public var client: String?
    public var clientKey: String?

    public init(conn: ConnectionID, openedAt: Micros, clientAddress: String = "127.0.0.1:1",
                request: UpgradeRecord? = nil, response: UpgradeRecord? = nil, frames: [FrameRecord] = []) {
        self.conn = conn
        self.openedAt = openedAt
        self.clientAddress = clientAddress
        self.request = request
        self.response = response
        self.frames = frames
        self.lastActivity = frames.last?.t ?? openedAt
    }

    /// The end of `side`'s stream, if recorded.
    public func end(of side: Side) -> RecordedEnding? {
        side == .client ? clientEnd : serverEnd
    }

    /// Whether `side`'s peer really saw this frame sent by `side` (dropped frames never
    /// arrived; an injected frame arrived although the named sender never sent it).
    public static func arrived(_ frame: FrameRecord) -> Bool { frame.action != .dropped }

    /// Whether the named sender really sent this frame (the proxy made up injected ones).
    public static func wasSent(_ frame: FrameRecord) -> Bool { frame.action != .injected }

    /// When the sender sent the frame: a delayed frame is recorded at its release.
    public static func sentAt(_ frame: FrameRecord) -> Micros {
        if case .delayed(let delay) = frame.action { return frame.t - delay }
        return frame.t
    }

    /// Adds records of this connection one at a time, in capture order.
    public struct Builder: Sendable {
        public private(set) var connection: RecordedConnection

        public init(_ open: OpenRecord) {
            connection = RecordedConnection(conn: open.conn, openedAt: open.t, clientAddress: open.client)
        }

        public mutating func add(_ record: CaptureRecord) {
            if let t = record.time { connection.lastActivity = max(connection.lastActivity, t) }
            switch record {
            case .upgrade(let upgrade):
                if upgrade.from == .client { connection.request = upgrade } else { connection.response = upgrade }
            case .frame(let frame):
                connection.frames.append(frame)
            case .end(let end):
                // A side's end as its peer saw it: with both legs recorded, the server's end is
                // the one on the client's leg (what the proxy passed on), the client's the one
                // on the upstream leg; an end a fault swallowed never reached the peer.
                if let leg = end.leg, leg != Leg(peer: end.side.other) { return }
                let kind: RecordedEnd
                switch end.kind {
                case .fin: kind = .fin
                case .rst, .error: kind = .reset
                case .captureEnd: return
                }
                setEnd(of: end.side, kind, at: end.t)
            case .fault(let fault):
                // A fault that ended the pair ends both streams as the peers saw them.
                switch fault.kind {
                case "reset":
                    setEnd(of: .client, .reset, at: fault.t)
                    setEnd(of: .server, .reset, at: fault.t)
                case "drop":
                    setEnd(of: .client, .fin, at: fault.t)
                    setEnd(of: .server, .fin, at: fault.t)
                default:
                    break
                }
            case .header, .open, .note, .tunnel, .http:
                break
            }
        }

        private mutating func setEnd(of side: Side, _ kind: RecordedEnd, at t: Micros) {
            if side == .client {
                if connection.clientEnd == nil { connection.clientEnd = RecordedEnding(kind: kind, t: t) }
            } else {
                if connection.serverEnd == nil { connection.serverEnd = RecordedEnding(kind: kind, t: t) }
            }
        }
    }
}
