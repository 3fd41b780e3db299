import Protocols

/// How a server message that ended the session (`SessionEnding`: SignalR's close message,
/// a Socket.IO namespace disconnect) changes the drop that follows it, for a spec whose
/// client honours such messages (`honoursServerEndings`). The close code or transport end
/// that comes after the message says less than the message did: a final one leaves the
/// client failed whatever the code, an invitation makes even the client's own close 1000
/// a drop to retry.
extension CloseAction {
    /// The action for a drop after `ending`, and what to add to the drop's cause when it
    /// changed (nil: unchanged).
    func after(_ ending: SessionEnding?) -> (action: CloseAction, note: String?) {
        switch ending {
        case nil:
            return (self, nil)
        case .final?:
            return self == .fail ? (self, nil) : (.fail, "after the server ended the session for good")
        case .reconnectInvited?:
            return self == .disconnect ? (.backoff, "after the server invited a reconnect") : (self, nil)
        }
    }

    /// The action for a drop after the client's own message ending the session for good
    /// (and no server ending before it): its disconnect, even when the server's close frame
    /// crossed its own.
    func afterTheClientEnded() -> (action: CloseAction, note: String?) {
        self == .disconnect || self == .fail ? (self, nil) : (.disconnect, "after the client ended the session")
    }
}
