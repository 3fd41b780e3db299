import Capture
import Realtime

/// One thing that happened to one client, as the engine hands it to the rules.
public enum TimelineStep: Sendable {
    /// A new connection (TCP open): an attempt, with its delay and schedule.
    case attempt(Attempt)
    /// The upgrade response (status 101 or a refusal).
    case upgradeResponse(conn: ConnectionID, t: Micros, status: Int?)
    /// The server's `connection_established` delivered to the client.
    case handshake(Handshake)
    /// Any other frame, with its decoded event when it carries one.
    case frame(FrameRecord, RealtimeEvent?)
    /// The client learned that the connection ended.
    case drop(Drop)
}

/// A connection attempt and what the schedule says about it.
public struct Attempt: Sendable, Hashable {
    public var conn: ConnectionID
    public var t: Micros
    /// Attempts since the last successful connection (1 for the first after a drop from connected).
    public var number: Int
    /// The number the client would be at if it never reset after a success.
    public var numberWithoutReset: Int
    /// The state the client was in when it opened the connection.
    public var fromState: String
    /// The drop that preceded it on this client, if any.
    public var previousDrop: Drop?
    /// Time from the previous drop to this open.
    public var delay: Micros?
    /// When the current interruption began (the drop from connected), for phased schedules.
    public var interruptedAt: Micros?
    public var evidence: Evidence
}

public struct Handshake: Sendable, Hashable {
    public var conn: ConnectionID
    public var t: Micros
    public var socketID: String?
    public var activityTimeout: Double?
    public var evidence: Evidence
}

/// How a connection ended, as the client learned it.
public struct Drop: Sendable, Hashable {
    public var conn: ConnectionID
    public var t: Micros
    public var closeCode: UInt16?
    public var closedBy: Side?
    /// What the client does next.
    public var action: CloseAction
    /// The connection had reached `connected`.
    public var wasConnected: Bool
    /// The state the client entered.
    public var newState: String
    /// "close 4009 from server", "RST from server", "upgrade refused 503".
    public var cause: String
    public var evidence: Evidence
    /// The fault whose frame or action ended the connection.
    public var fault: String?
}
