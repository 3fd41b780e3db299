import Capture
import Realtime
import Vocabulary

/// Settings of one analysis run.
public struct AnalyzerOptions: Sendable {
    public var spec: LifecycleSpec
    public var clientKey: ClientKeyMode
    /// `--protocol-prefix`; nil = the spec's, else detected from the first handshake.
    public var prefix: String?
    /// `--app-secret`: enables signature checks.
    public var appSecret: String?
    /// Put before client ids ("2/client-1") when several inputs share one report.
    public var clientIDPrefix: String

    public init(spec: LifecycleSpec, clientKey: ClientKeyMode = .standard, prefix: String? = nil, appSecret: String? = nil,
                clientIDPrefix: String = "") {
        self.spec = spec
        self.clientKey = clientKey
        self.prefix = prefix
        self.appSecret = appSecret
        self.clientIDPrefix = clientIDPrefix
    }
}

/// The streaming timeline engine. Feed it records in time order; it returns transitions
/// and findings as they become known. It keeps per-client and per-open-connection state
/// only, so it runs on captures of any size and live inside the proxy.
/// Timer checks run on record times (and at `finish`), never on the wall clock.
public struct LiveAnalyzer: Sendable {
    public let options: AnalyzerOptions
    private var decoder: RealtimeDecoder
    private var clients: [ClientTimeline] = []
    private var clientsByKey: [String: [Int]] = [:]
    private var clientOfConnection: [ConnectionID: Int] = [:]
    /// Ids are given in order of opening: anything at or below this was seen before.
    private var highestConnection: ConnectionID = 0
    /// Connections one of whose directions has ended.
    private var halfEnded: Set<ConnectionID> = []
    /// Opens waiting for their upgrade request, which carries the grouping key.
    private var pendingOpens: [ConnectionID: OpenRecord] = [:]
    private var lastSweep: Micros = 0
    private var now: Micros = 0
    /// How often (in record time) every client's timers are checked, not only the active one's.
    static let sweepInterval: Micros = 1_000_000

    /// Whether clients skip work that cannot find anything (`LifecycleRule.observes` and
    /// `quietUntil`): always, except in tests that check skipping changes nothing.
    private let shortcuts: Bool

    public init(options: AnalyzerOptions) {
        self.init(options: options, shortcuts: true)
    }

    init(options: AnalyzerOptions, shortcuts: Bool) {
        self.options = options
        self.shortcuts = shortcuts
        self.decoder = RealtimeDecoder(prefix: options.prefix ?? options.spec.prefix)
        self.fallback = options.spec.events == .realtime ? try? SpecLoader.load("websocket") : nil
    }

    /// The connection-level spec (`websocket`) for clients that speak no protocol events.
    private let fallback: LifecycleSpec?

    /// One line per client that showed none of the spec's protocol and was analyzed at
    /// connection level: "client-3: no bird events seen; analyzed at connection level".
    public var notes: [String] {
        let name = options.prefix ?? options.spec.prefix ?? decoder.prefix ?? options.spec.name
        return clients.filter(\.connectionLevel).map {
            "\($0.info.id): no \(name) events seen; analyzed at connection level"
        }
    }

    /// The prefix in use (given or detected); nil until known.
    public var prefix: String? { decoder.prefix }

    /// Clients found so far, in order of first appearance.
    public var clientInfos: [ClientInfo] { clients.map(\.info) }

    /// Consumes one record and returns what it revealed.
    public mutating func feed(_ record: CaptureRecord) -> [AnalysisEvent] {
        var events: [AnalysisEvent] = []
        if let t = record.time {
            now = max(now, t)
            events += sweep(to: now)
        }
        switch record {
        case .header, .note, .tunnel, .http:
            break
        case .open(let open):
            pendingOpens[open.conn] = open
        case .upgrade(let upgrade):
            if upgrade.from == .client, pendingOpens[upgrade.conn] != nil {
                events += assign(upgrade.conn, request: upgrade, t: upgrade.t)
            } else if clientOfConnection[upgrade.conn] == nil, upgrade.conn > highestConnection {
                events += assign(upgrade.conn, request: upgrade.from == .client ? upgrade : nil, t: upgrade.t)
            }
            if let index = clientOfConnection[upgrade.conn] { events += clients[index].upgrade(upgrade) }
        case .frame(let frame):
            if clientOfConnection[frame.conn] == nil {
                // A frame of a connection already forgotten (after both ends) is not a new client.
                guard frame.conn > highestConnection || pendingOpens[frame.conn] != nil else { break }
                events += assign(frame.conn, request: nil, t: frame.t)
            }
            var event: RealtimeEvent?
            if options.spec.events == .realtime, frame.opcode == .text { event = decoder.decode(frame.payload) }
            if let index = clientOfConnection[frame.conn] { events += clients[index].frame(frame, event: event) }
        case .end(let end) where !end.seenByClient:
            // The upstream leg's ends (proxy captures record both legs): only time moves.
            if let index = clientOfConnection[end.conn] { events += clients[index].end(end) }
        case .end(let end):
            if let index = clientOfConnection[end.conn] {
                events += clients[index].end(end)
                // Both directions ended: nothing more can come, so forget the connection
                // (memory stays flat however many connections a capture holds).
                if halfEnded.remove(end.conn) != nil || end.kind == .captureEnd {
                    clientOfConnection.removeValue(forKey: end.conn)
                } else {
                    halfEnded.insert(end.conn)
                }
            } else if pendingOpens[end.conn] != nil {
                events += assign(end.conn, request: nil, t: end.t)
                if let index = clientOfConnection[end.conn] { events += clients[index].end(end) }
            }
        case .fault(let fault):
            if let conn = fault.conn, let index = clientOfConnection[conn] {
                events += clients[index].fault(fault)
            }
        }
        return events
    }

    /// Runs every client's timer checks up to `time` (a live proxy calls this on its clock).
    public mutating func advance(to time: Micros) -> [AnalysisEvent] {
        now = max(now, time)
        var events: [AnalysisEvent] = []
        for i in clients.indices { events += clients[i].advance(to: now) }
        lastSweep = now
        return events
    }

    /// The input ended at `time`: final timer checks, open connections end with the capture.
    public mutating func finish(at time: Micros? = nil) -> [AnalysisEvent] {
        let end = max(now, time ?? now)
        var events: [AnalysisEvent] = []
        for (conn, open) in pendingOpens.sorted(by: { $0.key < $1.key }) {
            events += assign(conn, request: nil, t: open.t)
        }
        for i in clients.indices { events += clients[i].finish(at: end) }
        return events
    }

    private mutating func sweep(to time: Micros) -> [AnalysisEvent] {
        guard time - lastSweep >= Self.sweepInterval else { return [] }
        return advance(to: time)
    }

    /// Groups a connection into a client: same key and no open connection means the same
    /// client (sequential connections chain); an overlapping one is a different client.
    private mutating func assign(_ conn: ConnectionID, request: UpgradeRecord?, t: Micros) -> [AnalysisEvent] {
        let open = pendingOpens.removeValue(forKey: conn)
            ?? OpenRecord(conn: conn, t: t, client: "?", server: "?")
        let key = options.clientKey.key(open: open, request: request)
        var events: [AnalysisEvent] = []
        let candidates = (clientsByKey[key] ?? []).filter { clients[$0].openConnections == 0 }
        let index: Int
        if let best = candidates.max(by: { clients[$0].lastActivity < clients[$1].lastActivity }) {
            index = best
        } else {
            index = clients.count
            let info = ClientInfo(id: "\(options.clientIDPrefix)client-\(index + 1)", key: key, firstSeen: open.t)
            clients.append(ClientTimeline(info: info, spec: options.spec, appSecret: options.appSecret,
                                      shortcuts: shortcuts, fallback: fallback))
            clientsByKey[key, default: []].append(index)
            events.append(.client(info))
            events += clients[index].start()
        }
        clientOfConnection[conn] = index
        highestConnection = max(highestConnection, conn)
        events.append(.connection(conn, client: clients[index].info.id))
        events += clients[index].open(open)
        return events
    }
}
