import Protocols
import Vocabulary

/// How a message that ended the session (`SessionEnding`: SignalR's close message, a
/// Socket.IO namespace disconnect, engine.io's close packet) changes the drop that follows it, for a spec whose
/// client honours such messages (`honoursServerEndings`). The close code or transport end
/// that comes after the message says less than the message did: a final one leaves the
/// client failed whatever the code, an invitation makes even the client's own close 1000
/// a drop to retry.
extension CloseAction {
    /// The action for a drop after `ending` sent by `side`, and what to add to the drop's
    /// cause when it changed (nil: unchanged). The client's own final message makes the drop
    /// its disconnect, even when the server's close frame crossed its own; the client has
    /// nothing to invite.
    func after(_ ending: SessionEnding?, from side: Side) -> (action: CloseAction, note: String?) {
        switch (ending, side) {
        case (nil, _), (.reconnectInvited?, .client):
            return (self, nil)
        case (.final?, .server):
            return self == .fail ? (self, nil) : (.fail, "after the server ended the session for good")
        case (.reconnectInvited?, .server):
            return self == .disconnect ? (.backoff, "after the server invited a reconnect") : (self, nil)
        case (.final?, .client):
            return self == .disconnect || self == .fail ? (self, nil) : (.disconnect, "after the client ended the session")
        }
    }
}
