import Bird
import WebSocket

/// The six states of the Bird Realtime lifecycle guide.
public enum SimConnectionState: String, Sendable, Hashable, CaseIterable {
    case initialized, connecting, connected, unavailable, disconnected, failed
}

/// One socket the client asked the runner to open; events about older sockets are ignored,
/// so a late FIN from a connection the client already gave up on changes nothing.
public typealias SimSocketID = Int

/// How a socket ended, as the runner saw it.
public enum SimSocketEnd: Sendable, Hashable {
    /// The server sent a close frame (code nil for an empty body).
    case closeFrame(code: UInt16?, reason: String)
    /// TCP FIN without a close frame.
    case fin
    /// TCP RST.
    case reset
    /// Connecting failed (DNS, refused, upgrade refused) or a socket error.
    case failed(String)
}

/// Something that happened to the client: the app's calls, its socket, its timers.
public enum SimClientEvent: Sendable, Hashable {
    // App commands.
    case connect
    case disconnect
    case subscribe(String)
    case unsubscribe(String)
    case signin(userID: String)
    /// `channel.trigger(event, data)`: refused (logged, not sent) while unsubscribed.
    case trigger(channel: String, event: String)
    // Socket.
    /// TCP up and the upgrade answered 101: the WebSocket is open.
    case socketOpened(SimSocketID)
    case received(SimSocketID, Frame)
    case socketClosed(SimSocketID, SimSocketEnd)
    // Time.
    case timer(SimClientTimer)
}

public enum SimClientTimer: Sendable, Hashable, CaseIterable {
    /// The backoff (or slow-retry) delay is over: open the next socket.
    case reconnect
    /// No handshake within the handshake timeout.
    case handshake
    /// Activity timeout of silence: time to ping.
    case activity
    /// Pong timeout after our ping.
    case pong
    /// The sim app's periodic client event.
    case trigger
}

/// What the runner must do, in order.
public enum SimClientCommand: Sendable, Hashable {
    /// Connect to the URL and upgrade; report `.socketOpened` or `.socketClosed(.failed)`.
    case openSocket(SimSocketID)
    /// Send a frame (unmasked here; the runner masks it, as RFC 6455 requires of clients).
    /// A frame for a socket still connecting goes out right behind the upgrade request.
    case send(SimSocketID, Frame)
    /// Send a close frame with this code (if the WebSocket is open) and end the socket. The
    /// client has already moved on: nothing more about this socket matters to it.
    case close(SimSocketID, code: UInt16, reason: String)
    /// Deliver `.timer(timer)` at `at`, replacing an earlier schedule of the same timer.
    case schedule(SimClientTimer, at: SimMicros)
    case cancel(SimClientTimer)
    /// A state change, to print as `connecting -> connected (socket 1234.5678)`.
    case stateChanged(from: SimConnectionState, to: SimConnectionState, detail: String)
    /// Something worth a line: errors, refusals, sign-in, subscriptions.
    case log(String)
    /// A server or client event handed to the app (not a protocol event).
    case delivered(BirdMessage)
}
