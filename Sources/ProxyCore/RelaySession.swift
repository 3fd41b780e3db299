import Capture
import Faults
import Vocabulary
import Protocols
import WebSocket

/// One proxied connection pair, with no sockets inside: the I/O shell feeds it
/// `RelayEvent`s and carries out the `RelayCommand`s it returns, in order.
///
/// Life of a pair: read the client's upgrade request (a non-WebSocket request gets a 4xx and
/// the socket closes), connect upstream, forward the request with `Host` rewritten, relay
/// the server's response as it came (a refusal is relayed with its body, then the pair
/// ends), then relay frames both ways one by one with their boundaries, opcodes, RSV bits
/// and payloads. Client frames are re-masked with fresh keys from the session's seeded
/// generator. Protocol errors are recorded and relayed unless `config.strict`.
/// What cannot be relayed at all (a frame over the size limit, an unparseable header) ends
/// the pair with close 1009 or 1002 to the offender.
public struct RelaySession {
    enum Phase: Equatable {
        /// Reading the client's request head.
        case awaitingRequest
        /// The request is complete; waiting for `.upstreamConnected`.
        case connecting
        /// The request went upstream; reading the response head.
        case awaitingResponse
        /// The server refused the upgrade; relaying its body (`remaining` nil: until FIN).
        case relayingRefusal(remaining: Int?)
        /// The WebSocket is open: relaying frames.
        case open
        /// A fault sent a close frame to `target`: waiting for its reply, then closing it.
        case faultClosing(target: Side, deadline: Micros, rule: String)
        /// Both close frames were relayed: each peer's TCP end (FIN or RST) is passed on to
        /// the other as it comes, until both ended or `deadline` (`RelaySession+Ends`).
        case closingTCP(deadline: Micros)
        /// Not HTTP: bytes relayed both ways as they come (`connected`: the upstream is up).
        case plainTCP(connected: Bool)
        /// Nothing more to relay.
        case finished
    }

    public let conn: ConnectionID
    public let clientAddress: String
    public let listenAddress: String
    public let upstreamAddress: String
    public let config: RelayConfig

    var phase: Phase = .awaitingRequest
    /// This connection's protocol table entry (it learns the dialect as events pass): the
    /// spec's, or the one detection chose; nil while undecided or when none decodes.
    var wire: (any WireProtocol)?
    /// Choosing `wire` from the upgrade and the first messages (`RelaySession+Protocol`).
    var detection: ProtocolDetection?
    var faults: ConnectionFaults?
    /// The offer sent upstream asked for no context takeover (`RelaySession+Deflate`).
    var askedNoContextTakeover = false
    let engine: FaultEngine?
    /// Masking keys for client frames going upstream (RFC 6455 wants fresh keys per frame).
    var maskRandom: SeededGenerator
    var requestParser: HTTPHeadParser
    var responseParser: HTTPHeadParser
    var request: HTTPRequestHead?
    /// Raw bytes read from the server while its response head is incomplete.
    var responseBytes: [UInt8] = []
    /// Client bytes that arrived after its request head, before the WebSocket opened.
    var earlyClientBytes: [UInt8] = []
    var client: RelayDirection
    var server: RelayDirection
    /// Sockets the session closed or reset (or saw end), to know when the pair is over.
    var closedSockets: Set<Side> = []
    /// Ends recorded so far, per leg and sender (`RelaySession+Ends`).
    var recordedEnds: Set<EndSlot> = []
    /// Sides whose connection broke (RST or error): the proxy sends them nothing more.
    var hardEnded: Set<Side> = []
    /// The upstream socket exists (connected and not yet given up).
    var upstreamOpen = false
    /// The time of the event being handled, for records made by helpers that are not given it.
    var clock: Micros = 0
    /// Bytes relayed each way on a plain TCP connection.
    var plainCounts = (client: 0, server: 0)
    /// Some of the client's request head has arrived (so its first byte was checked).
    var sawClientBytes = false
    var timerID = 0
    /// When the handshake must be over (set at `start`); see `RelayConfig.handshakeTimeout`.
    var handshakeDeadline: Micros = .max
    var scheduledAt: Micros?
    /// The operator's pause on this connection and what it holds (`RelaySession+Intercept`).
    var interceptPause: InterceptPause?
    var interceptQueue = InterceptQueue()
    /// The queue changed since the desk was last told.
    var interceptChanged = false

    /// - Parameters:
    ///   - faults: the proxy's shared fault engine, or nil for a plain relay.
    ///   - maskSeed: seed of the generator for the masking keys of client frames. The shell
    ///     passes a fresh random value per connection; tests pass a fixed one.
    public init(conn: ConnectionID, clientAddress: String, listenAddress: String, upstreamAddress: String,
                config: RelayConfig, faults: FaultEngine? = nil,
                maskSeed: UInt64 = UInt64.random(in: .min ... .max)) {
        self.conn = conn
        self.clientAddress = clientAddress
        self.listenAddress = listenAddress
        self.upstreamAddress = upstreamAddress
        self.config = config
        switch config.protocolChoice {
        case .none: wire = nil
        case .entry(let entry): wire = entry
        case .detect(let table): detection = ProtocolDetection(table: table)
        }
        self.engine = faults
        self.maskRandom = SeededGenerator(seed: maskSeed)
        requestParser = HTTPHeadParser(maxHeadBytes: config.maxHeadBytes)
        responseParser = HTTPHeadParser(maxHeadBytes: config.maxHeadBytes)
        client = RelayDirection(sender: .client, maxPayload: config.maxPayload)
        server = RelayDirection(sender: .server, maxPayload: config.maxPayload)
    }

    /// True once both sockets are closed: the shell may drop the session.
    public var isFinished: Bool { phase == .finished && closedSockets.count == 2 }

    /// The connection was accepted: records it.
    public mutating func start(now: Micros) -> [RelayCommand] {
        clock = now
        if let engine { faults = ConnectionFaults(engine: engine, conn: conn, openedAt: now) }
        interceptPause = config.intercept?.pause(for: conn)
        let (deadline, overflow) = now.addingReportingOverflow(max(0, config.handshakeTimeout))
        handshakeDeadline = overflow ? .max : deadline
        var out: [RelayCommand] = [.record(.open(OpenRecord(conn: conn, t: now, client: clientAddress, server: listenAddress,
                                                             upstream: upstreamAddress)))]
        reschedule(into: &out)
        return out
    }

    public mutating func handle(_ event: RelayEvent, now: Micros) -> [RelayCommand] {
        var out: [RelayCommand] = []
        clock = now
        if let outcomes = faults?.refresh(now: now), !outcomes.isEmpty { apply(outcomes, now: now, into: &out) }
        switch event {
        case .received(from: .client, let bytes): clientBytes(bytes, now: now, into: &out)
        case .received(from: .server, let bytes): serverBytes(bytes, now: now, into: &out)
        case .upstreamConnected: upstreamConnected(now: now, into: &out)
        case .upstreamFailed(let reason): upstreamFailed(reason, now: now, into: &out)
        case .ended(let side, let kind, let detail): ended(side, kind: kind, detail: detail, now: now, into: &out)
        case .timer(let id): timer(id, now: now, into: &out)
        case .faultsChanged: interceptDeskChanged(now: now, into: &out)
        }
        if interceptChanged || phase == .finished && (interceptPause != nil || !interceptQueue.isEmpty) {
            publishIntercept(now: now, into: &out)
        }
        reschedule(into: &out)
        decodeEvents(in: &out)
        return out
    }

    // MARK: Shared helpers

    /// One direction's state, mutated in place. `_modify` (not `set`) matters: with get/set,
    /// `self[direction: side].decoder.append(bytes)` copied the whole `RelayDirection` out, so
    /// the decoder's buffer had two owners and every append and every frame taken out of it
    /// copied the buffer (copy-on-write) before the copy was written back.
    subscript(direction side: Side) -> RelayDirection {
        get { side == .client ? client : server }
        _modify {
            if side == .client { yield &client } else { yield &server }
        }
    }

    func note(_ level: NoteRecord.Level, _ message: String, now: Micros) -> RelayCommand {
        .record(.note(NoteRecord(conn: conn, t: now, level: level, message: message)))
    }

    /// Closes a side's socket: the shell sends FIN after the pending writes (recorded as the
    /// proxy's end on that leg), drains what the peer still sends, then closes.
    mutating func closeSocket(_ side: Side, into out: inout [RelayCommand]) {
        guard !closedSockets.contains(side) else { return }
        closedSockets.insert(side)
        recordProxyEnd(towards: side, kind: .fin, into: &out)
        out.append(.close(side))
    }

    mutating func resetSocket(_ side: Side, into out: inout [RelayCommand]) {
        guard !closedSockets.contains(side) else { return }
        closedSockets.insert(side)
        recordProxyEnd(towards: side, kind: .rst, into: &out)
        out.append(.reset(side))
    }

    /// Ends the pair: closes both sockets (after pending writes drain).
    mutating func finish(into out: inout [RelayCommand]) {
        phase = .finished
        closeSocket(.client, into: &out)
        closeSocket(.server, into: &out)
    }
}
