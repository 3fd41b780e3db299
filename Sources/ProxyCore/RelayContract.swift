// PUBLIC CONTRACT between the sans-IO relay session (ProxyCore) and the I/O shell
// (Transport + the `proxy` command). The shell turns socket happenings into `RelayEvent`s,
// hands them to `RelaySession.handle`, and carries out the returned `RelayCommand`s in order.
// Both sides may add cases, keeping these.
import Capture
import ProtocolTable
import Protocols
import Vocabulary
import WebSocket

/// Something that happened to one proxied connection pair.
public enum RelayEvent: Sendable, Hashable {
    /// The upstream TCP (and TLS, later) connection is up.
    case upstreamConnected
    /// The upstream could not be reached: DNS, refused, timeout. Carries the reason.
    case upstreamFailed(String)
    /// Bytes read from one side's socket.
    case received(from: Side, bytes: [UInt8])
    /// One side's stream ended: EOF (FIN), reset, or an error.
    case ended(side: Side, kind: EndKind, detail: String?)
    /// A wake-up the session asked for with `.schedule` fired.
    case timer(id: Int)
    /// The fault engine's rules changed, or a rule was applied to this connection
    /// (`FaultEngine.applyNow`): the session picks the change up at once.
    case faultsChanged
}

/// What the shell must do next, in order.
public enum RelayCommand: Sendable, Hashable {
    /// Open the TCP connection to the configured upstream.
    case connectUpstream
    /// Write bytes to one side.
    case send(to: Side, bytes: [UInt8])
    /// Half-close our writing direction towards a side (send FIN), keep reading.
    case shutdown(Side)
    /// Abort a side's connection with RST.
    case reset(Side)
    /// Close a side's socket (after pending writes drain).
    case close(Side)
    /// Append to the capture (and the live view, which filters what matters).
    case record(CaptureRecord)
    /// Deliver `.timer(id)` at `at` (capture-relative microseconds).
    case schedule(id: Int, at: Micros)
    /// Stop or restart reading a side (faults such as blackhole; backpressure is the shell's own).
    case pauseReading(Side)
    case resumeReading(Side)
}

/// Where a relay's protocol table entry comes from.
public enum ProtocolChoice: Sendable {
    /// Decode nothing (a plain relay with no faults and no live view).
    case none
    /// This entry, named by the spec (`--spec`'s `events`).
    case entry(any WireProtocol)
    /// Chosen per connection through this table, from the upgrade request or the first
    /// messages (`ProtocolDetector`); the choice is recorded as an info note.
    case detect(ProtocolTable)
}

/// Settings of one relay, fixed at proxy start.
public struct RelayConfig: Sendable {
    /// "host:port" to put in the Host header sent upstream.
    public var upstreamHost: String
    /// Path prefix of the upstream URL (the client's target is appended to it), usually "".
    public var upstreamPathPrefix: String
    public var maxPayload: Int
    public var maxHeadBytes: Int
    /// Fail a connection on an RFC 6455 violation instead of relaying it (`--strict`).
    public var strict: Bool
    /// How long a connection may take from accept to the WebSocket being open (the client's
    /// request, the upstream connect and its response); past it the pair is closed
    /// (`--handshake-timeout`). Bounds slow and idle clients (slowloris).
    public var handshakeTimeout: Micros = RelayConfig.defaultHandshakeTimeout
    public static let defaultHandshakeTimeout: Micros = 10_000_000
    /// Bytes of frames a latency fault may hold back per direction; past it the sender stops
    /// being read until the queue drains to half (backpressure instead of growth).
    public var maxDelayedBytes: Int = 1 << 20
    /// Frames with a larger payload are relayed as their bytes arrive instead of gathered
    /// whole, and recorded as a prefix of `passThroughRecordPrefix` bytes, the length and
    /// a SHA-256 (see `RelaySession+PassThrough`).
    public var passThroughAbove: Int = 256 << 10
    public var passThroughRecordPrefix: Int = 4 << 10
    /// Bytes of large frames that may be gathered whole at once for the faults that need
    /// them, over all connections sharing this configuration (`LargeFrameBudget`).
    public var largeFrameBudget = LargeFrameBudget()
    /// How each connection gets the protocol table entry that decodes each complete text
    /// message's event once, for the record to carry (faults, the live view and the live
    /// analysis read it there). Each session learns its own dialect.
    public var protocolChoice: ProtocolChoice = .detect(.standard)
    /// The name this proxy gives itself in the `Via` header of every request it forwards,
    /// and recognises there to detect a loop (`ViaHeader`); nil adds and checks nothing.
    public var viaPseudonym: String?
    /// Where the operator pauses connections and decides on their held messages (the
    /// control API's `/intercept`); nil: nothing is ever held.
    public var intercept: InterceptDesk?

    public init(upstreamHost: String, upstreamPathPrefix: String = "", maxPayload: Int = FrameDecoder.defaultMaxPayload,
                maxHeadBytes: Int = HTTPHeadParser.defaultMaxHeadBytes, strict: Bool = false) {
        self.upstreamHost = upstreamHost
        self.upstreamPathPrefix = upstreamPathPrefix
        self.maxPayload = maxPayload
        self.maxHeadBytes = maxHeadBytes
        self.strict = strict
    }
}
