/// What each rule means, in a user's words, with an example of a violation: the text of
/// `faultline specs rules` and `faultline analyze --explain RULE` (docs/rules.md says the
/// same at more length). One entry per id of `RuleRegistry`; a test keeps them in step.
public enum RuleGuide {
    public struct Entry: Sendable {
        public var id: String
        /// When the rule is violated, one line.
        public var meaning: String
        /// A concrete violation, as the report would show it.
        public var example: String
    }

    public static func entry(_ id: String) -> Entry? { entries.first { $0.id == id } }

    public static let entries: [Entry] = [
        Entry(id: "backoff.bound",
              meaning: "A reconnect came later than its backoff allows: the delay of attempt n is above min(cap, base x 2^(n-1)) + tolerance.",
              example: "Dropped at 10.0 s, next TCP open at 14.2 s: attempt 1 may wait at most 1 s (+0.25 s), so 'delay 4.20 s > bound 1.00 s for attempt 1'."),
        Entry(id: "backoff.reset",
              meaning: "Like backoff.bound, but the delay fits a client that forgot to reset its attempt counter after its last successful handshake.",
              example: "After reconnecting and connecting once, the next drop waits 7.8 s: fine for attempt 4, too long for attempt 1."),
        Entry(id: "backoff.jitter",
              meaning: "With 8 or more delays, they are not spread uniformly over [0, bound]: the client waits a fixed share of its bound instead of full jitter.",
              example: "Eight reconnects that each wait exactly half their bound: 'all 8 delays are 0.50 of their bound: no jitter'."),
        Entry(id: "close.immediate-retry",
              meaning: "After a close in the retry-now band (4200-4299 for Bird), the next attempt came later than the immediate tolerance (0.5 s).",
              example: "Closed with 4201 (pong timeout) at 3.0 s, reconnected at 4.1 s: 'delay 1.10 s > bound 0.50 s'."),
        Entry(id: "failed.retried",
              meaning: "The client opened a new connection after a refusal (4000-4099): state failed never retries by itself.",
              example: "The server closed with 4009 (unauthorized) at 20 s and the client reconnected at 21 s."),
        Entry(id: "stale.ping-missing",
              meaning: "The client received nothing for the activity timeout + tolerance and did not send a ping.",
              example: "Activity timeout 120 s; the last frame arrived at 5 s and no ping was sent by 125.25 s."),
        Entry(id: "stale.close-missing",
              meaning: "After a ping left unanswered for the pong timeout, the client did not close the connection within pong timeout + tolerance.",
              example: "Ping at 2.3 s, no answer, and the socket still open at 3.6 s with a 1 s pong timeout."),
        Entry(id: "stale.close-code",
              meaning: "The client closed a stale connection with a code outside 4200-4299 (it must say 'reconnect now').",
              example: "No pong after the ping, and the client closed with 1000 instead of 4201."),
        Entry(id: "stale.premature-close",
              meaning: "The client closed with 4200-4299 for a missing pong although the server had answered, or before the pong timeout passed.",
              example: "Ping at 10 s, pong at 10.2 s, and a 4201 close at 10.5 s anyway."),
        Entry(id: "stale.pong-missing",
              meaning: "With server pings (stale model serverPing, as engine.io): the client did not answer a server ping with a pong within the immediate tolerance.",
              example: "The server pinged at 25.0 s and the client sent no pong by 25.5 s: 'no pong 0.50 s after the server's ping > bound 0.50 s'."),
        Entry(id: "reconnect.missing",
              meaning: "After a drop its policy answers with a retry, no new connection came by the window's upper end + tolerance. Undetermined when the capture ends inside the window.",
              example: "RST at 10.0 s, attempt 1 may wait up to 1 s (+0.25 s), and nothing by 11.25 s: 'no reconnect within 1.25 s of RST from server'."),
        Entry(id: "handshake.missing-id",
              meaning: "After a handshake without socket_id the client kept the socket open beyond the immediate tolerance, or sent something other than a close on it.",
              example: "The server's connection_established had no socket_id and the client subscribed 0.1 s later."),
        Entry(id: "handshake.early-subscribe",
              meaning: "The client sent a subscribe, a sign-in or a client event before the server's handshake.",
              example: "bird:subscribe sent 0.02 s after the TCP open, before connection_established arrived."),
        Entry(id: "channels.resubscribe",
              meaning: "A channel held when a connection ended was not subscribed again within the resubscribe window (10 s) after the next connected.",
              example: "Subscribed to private-chat, dropped, reconnected at 4.7 s and never sent the subscribe: reported at 14.7 s. If the capture ends inside the window, the check is undetermined, not passed."),
        Entry(id: "channels.stale-auth",
              meaning: "A private or presence subscribe reused an auth signature already sent on an earlier connection (it binds the old socket id).",
              example: "After a reconnect, 'subscribe private-chat reuses the auth sent on connection 5'."),
        Entry(id: "channels.auth-signature",
              meaning: "With --app-secret only: a subscribe's or sign-in's auth is not the HMAC-SHA256 of this connection's socket id (and channel). Without the secret the rule is listed as not checked.",
              example: "subscribe private-chat with auth signed for another socket id: 'auth is not the signature for socket id 1234.5678'."),
        Entry(id: "signin.repeat",
              meaning: "A client that signed in successfully did not sign in again within the window after connecting on a later connection.",
              example: "signin_success on connection 1; connection 3 connected at 4.7 s and sent no bird:signin by 14.7 s."),
        Entry(id: "trigger.unsubscribed",
              meaning: "The client sent a client event on a channel before that channel's subscription succeeded on the current connection.",
              example: "client-typing sent on private-chat right after a reconnect, before subscription_succeeded."),
        Entry(id: "server.handshake-missing-id",
              meaning: "Server rule: the server's handshake (connection_established) carried no socket_id.",
              example: "{\"event\":\"bird:connection_established\",\"data\":\"{}\"}"),
        Entry(id: "server.pong-missing",
              meaning: "Server rule (warning): the server did not answer a ping within the pong timeout. Often caused by a stall-pongs fault, which the finding then names.",
              example: "Ping at 2.3 s, no pong or other frame by 3.3 s with a 1 s pong timeout."),
        Entry(id: "agora.backoff-schedule",
              meaning: "agora-rtm: within 2 minutes of an interruption, attempt n did not come 2^n s after the previous one, within tolerance.",
              example: "Dropped, first attempt after 4.2 s where Agora waits 2 s."),
        Entry(id: "agora.suspended-interval",
              meaning: "agora-rtm: after 2 minutes without success (state suspended), attempts are not 30 s apart within tolerance.",
              example: "Suspended since 120 s, attempts at 150 s and 160 s."),
        Entry(id: "agora.failed-retried",
              meaning: "agora-rtm: an attempt after a fatal refusal (state failed).",
              example: "Upgrade refused with 401, then another TCP open."),
        Entry(id: "agora.stream-give-up",
              meaning: "agora-rtm-stream: an attempt more than 20 minutes after the interruption; the client must be failed by then.",
              example: "Interrupted at 0 s, still reconnecting at 1250 s."),
    ]
}
