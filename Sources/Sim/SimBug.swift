/// A deliberate deviation of the reference client from the lifecycle, one per client rule of
/// docs/rules.md, so the analyzer can be shown to catch each one
/// (`faultline sim client --bug NAME`). Each changes one decision and nothing else.
public enum SimBug: String, CaseIterable, Sendable, Hashable {
    case noJitter = "no-jitter"
    case exceedBackoff = "exceed-backoff"
    case noBackoffReset = "no-backoff-reset"
    case slowImmediateRetry = "slow-immediate-retry"
    case retryAfterRefused = "retry-after-refused"
    case noPing = "no-ping"
    case noStaleClose = "no-stale-close"
    case wrongStaleCode = "wrong-stale-code"
    case prematureStaleClose = "premature-stale-close"
    case ignoreMissingID = "ignore-missing-id"
    case earlySubscribe = "early-subscribe"
    case skipResubscribe = "skip-resubscribe"
    case reuseAuth = "reuse-auth"
    case badSignature = "bad-signature"
    case skipSignin = "skip-signin"
    case triggerUnsubscribed = "trigger-unsubscribed"

    /// The rule (docs/rules.md) this bug breaks.
    public var ruleID: String {
        switch self {
        case .noJitter: "backoff.jitter"
        case .exceedBackoff: "backoff.bound"
        case .noBackoffReset: "backoff.reset"
        case .slowImmediateRetry: "close.immediate-retry"
        case .retryAfterRefused: "failed.retried"
        case .noPing: "stale.ping-missing"
        case .noStaleClose: "stale.close-missing"
        case .wrongStaleCode: "stale.close-code"
        case .prematureStaleClose: "stale.premature-close"
        case .ignoreMissingID: "handshake.missing-id"
        case .earlySubscribe: "handshake.early-subscribe"
        case .skipResubscribe: "channels.resubscribe"
        case .reuseAuth: "channels.stale-auth"
        case .badSignature: "channels.auth-signature"
        case .skipSignin: "signin.repeat"
        case .triggerUnsubscribed: "trigger.unsubscribed"
        }
    }

    /// What the client does instead, and what a run needs for it to show.
    public var summary: String {
        switch self {
        case .noJitter: "waits exactly the bound min(cap, base*2^(n-1)) every time (8+ reconnects to show)"
        case .exceedBackoff: "waits cap + 1 s + a jittered bound, beyond every attempt's bound"
        case .noBackoffReset: "never resets the attempt counter on a handshake, so delays grow across connections"
        case .slowImmediateRetry: "after a 4200-4299 close waits 1 s (the slow-retry delay) instead of reconnecting at once"
        case .retryAfterRefused: "treats a 4000-4099 refusal like a network failure: unavailable, then backoff"
        case .noPing: "never pings after the activity timeout (needs a silent connection)"
        case .noStaleClose: "pings, but keeps an unanswered connection open (needs stalled pongs)"
        case .wrongStaleCode: "closes a stale connection with 1000 instead of 4201 (needs stalled pongs)"
        case .prematureStaleClose: "never stops its pong timer: closes with 4201 a pong timeout after its ping although the pong came"
        case .ignoreMissingID: "keeps a handshake without socket_id open and acts connected (needs --omit-socket-id)"
        case .earlySubscribe: "pipelines subscribes to public channels behind the upgrade request, before the handshake (needs a public channel)"
        case .skipResubscribe: "subscribes only on its first connection, never again after a reconnect"
        case .reuseAuth: "re-sends the first connection's signature for private and presence channels (the server refuses it)"
        case .badSignature: "signs channel subscriptions with a wrong secret (the server refuses them)"
        case .skipSignin: "signs in on its first connection only"
        case .triggerUnsubscribed: "sends client events on channels whose subscription has not succeeded yet"
        }
    }

    /// `--bug` values in help order.
    public static var names: [String] { allCases.map(\.rawValue) }
}
