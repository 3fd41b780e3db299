/// Everything the reference client is told at start. Timings default to the lifecycle
/// guide's values and can all be shortened so tests run in seconds.
public struct SimClientSettings: Sendable {
    public var appKey = "sim-key"
    /// The app secret, used by the client to sign channel and sign-in auth itself: a test
    /// shortcut for the app's auth endpoint (see `BirdAuth`).
    public var appSecret = "sim-secret"
    public var prefix = "bird"
    /// Channels subscribed at start (and re-subscribed after every reconnect).
    public var channels: [String] = []
    /// Signs in as this user on every connection when set.
    public var userID: String?
    public var backoff = Backoff()
    /// Used until a handshake supplies `activity_timeout`.
    public var activityTimeout: SimMicros = 120 * SimDuration.second
    /// Let the handshake's `activity_timeout` override `activityTimeout` (the guide's rule).
    public var useHandshakeActivityTimeout = true
    public var pongTimeout: SimMicros = 30 * SimDuration.second
    /// No handshake this long after opening a socket: close it (3008) and back off.
    public var handshakeTimeout: SimMicros = 10 * SimDuration.second
    /// The sim app sends a client event on each private/presence channel this often; nil for never.
    public var triggerInterval: SimMicros? = 10 * SimDuration.second
    /// The delay `slow-immediate-retry` waits after a 4200-4299 close.
    public var slowRetryDelay: SimMicros = SimDuration.second
    public var bugs: Set<SimBug> = []

    public init() {}

    func event(_ name: String) -> String { "\(prefix):\(name)" }
    func internalEvent(_ name: String) -> String { "\(prefix)_internal:\(name)" }
}
