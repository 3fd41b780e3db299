/// What a server message says about the session it ends, for protocols whose server can
/// end one with a message of their own before the transport goes (SignalR's close message,
/// a Socket.IO namespace disconnect). Set by the protocol's entry on the event; the
/// lifecycle engine reads it on the drop that follows, when the spec says its client
/// honours it (`honoursServerEndings`).
public enum SessionEnding: String, Sendable, Hashable {
    /// The server ended the session for good: the client must not reconnect by itself.
    case final
    /// The server ended the session and invites the client to reconnect.
    case reconnectInvited = "reconnect invited"
}
