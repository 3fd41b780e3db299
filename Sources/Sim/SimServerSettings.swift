/// What `faultline sim server` is told at start; every field has the command line's default.
public struct SimServerSettings: Sendable {
    /// The protocol served, a name in `SimServerProtocols.all` (`--protocol`).
    public var protocolName = "bird"
    public var appKey = "sim-key"
    public var appSecret = "sim-secret"
    /// Event prefix: `bird` (Bird Realtime) or `pusher`.
    public var prefix = "bird"
    /// Seconds, sent in the handshake as `activity_timeout`.
    public var activityTimeout = 120
    /// How often every channel with subscribers gets a server event; nil for none.
    public var eventInterval: SimMicros? = 5 * SimDuration.second
    /// Name of the periodic server event.
    public var eventName = "sim-tick"
    /// Close every connection this long after it opened, with `closeCode` (a server restart
    /// or a load balancer draining, on a schedule).
    public var closeAfter: SimMicros?
    public var closeCode: UInt16 = 4200
    /// Refuse every connection at open with this code (`P:error` then close), no handshake.
    public var refuseCode: UInt16?
    /// Send the handshake without `socket_id` (a broken server, for `handshake.missing-id`).
    public var omitSocketID = false
    /// Answer no ping (neither `P:ping` nor ping frames), so clients' stale checks fire
    /// without a proxy in between.
    public var stallPongs = false
    /// graphql-ws: how long a connection may go without `connection_init` before the
    /// server closes it 4408 (the graphql-ws server's `connectionInitWaitTimeout`, 3 s).
    public var initTimeout: SimMicros = 3 * SimDuration.second
    /// A SignalR hub's `closeAfter` close message is final: an `error`, no `allowReconnect`.
    public var closeFinal = false
    /// A SignalR hub's `closeAfter` close message says `allowReconnect: false` (final, no error).
    public var closeNoReconnect = false
    /// How often a SignalR hub pings each connection (`HubOptions.KeepAliveInterval`).
    public var keepAliveInterval: SimMicros = 15 * SimDuration.second
    /// engine.io (`--protocol socketio`): how often the server pings, and how long it waits
    /// for the pong (both announced in the open packet).
    public var pingInterval: SimMicros = 25 * SimDuration.second
    public var pingTimeout: SimMicros = 20 * SimDuration.second

    public init() {}

    /// `P:connection_established` and friends.
    func event(_ name: String) -> String { "\(prefix):\(name)" }
    /// `P_internal:subscription_succeeded` and friends.
    func internalEvent(_ name: String) -> String { "\(prefix)_internal:\(name)" }
}

/// One accepted connection, numbered by the runner.
public typealias SimConnectionID = Int

/// Something that happened to the server. The upgrade itself is the runner's business;
/// `.opened` comes once the 101 response is out.
public enum SimServerEvent: Sendable, Hashable {
    /// A WebSocket connection is up; `path` is the request target (`/app/KEY?protocol=7...`).
    case opened(SimConnectionID, path: String)
    /// A complete frame from the client (unmasked).
    case received(SimConnectionID, Frame)
    /// The connection is gone (close handshake done, FIN, RST or error).
    case closed(SimConnectionID)
    /// A timer the server asked for with `.schedule`.
    case timer(SimServerTimer)
}

public enum SimServerTimer: Sendable, Hashable {
    /// The periodic server events.
    case tick
    /// `closeAfter` for one connection.
    case closeAfter(SimConnectionID)
    /// A protocol's own per-connection timer, told apart by `tag` (engine.io's ping
    /// interval, a heartbeat deadline).
    case connection(SimConnectionID, tag: Int)
}

/// What the runner must do, in order.
public enum SimServerCommand: Sendable, Hashable {
    case send(SimConnectionID, Frame)
    /// Send a close frame with this code and end the connection once it is out.
    case close(SimConnectionID, code: UInt16, reason: String)
    /// Deliver `.timer(timer)` at `at` (replaces an earlier schedule of the same timer).
    case schedule(SimServerTimer, at: SimMicros)
    /// One line for the operator: connections, subscriptions, refusals.
    case log(String)
}

import WebSocket
