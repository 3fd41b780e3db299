import Capture
import Protocols
import Vocabulary

/// One unit of work for the clients, in the order one thread would do it: what
/// `ClientRouter` makes of a record and `ClientShard` carries out. A step concerns one
/// client, except `sweep` and `finish`, which concern every client.
///
/// As small as a frame's step (the cases larger than it, all rare, are boxed): a step is
/// moved from the router into a batch and on to its shard, and every frame's was as large
/// as the largest case.
public enum RoutedStep: Sendable {
    /// Every client's timer checks up to this record time.
    case sweep(to: Micros)
    /// A new client, numbered `ordinal` (0-based, in order of first appearance).
    case newClient(ordinal: Int, ClientInfo)
    /// At the end of the input, a connection that never sent its upgrade request and joins
    /// no earlier client: a new client whose whole story is its `open`. The shard opens and
    /// finishes it at once (`at`) and keeps nothing, so a capture cut short with very many
    /// such connections never holds all their timelines at once.
    indirect case lateClient(ordinal: Int, ClientInfo, OpenRecord, at: Micros)
    /// A connection grouped under the client: its `open`.
    case open(client: Int, OpenRecord)
    indirect case upgrade(client: Int, UpgradeRecord)
    case frame(client: Int, FrameRecord, FrameEvent)
    case end(client: Int, EndRecord)
    indirect case fault(client: Int, FaultRecord)
    /// The input ended: final checks of every client.
    case finish(at: Micros)

    /// The ordinal of the client the step makes (`newClient`, `lateClient`).
    public var newClientOrdinal: Int? {
        switch self {
        case .newClient(let ordinal, _), .lateClient(let ordinal, _, _, _): ordinal
        default: nil
        }
    }

    /// The time of the input's end, for `finish`; nil for every other step.
    public var finishTime: Micros? {
        if case .finish(let time) = self { time } else { nil }
    }

    /// The one client the step concerns; nil for `sweep` and `finish`.
    public var client: Int? {
        switch self {
        case .sweep, .finish: nil
        case .newClient(let ordinal, _), .lateClient(let ordinal, _, _, _): ordinal
        case .open(let client, _), .upgrade(let client, _), .frame(let client, _, _), .end(let client, _),
             .fault(let client, _): client
        }
    }
}

/// A frame's protocol event: none (not a text frame, or its payload carried none), already
/// decoded by the router (while the prefix is still being learned), or to be decoded by the
/// shard with the prefix the router learned.
///
/// Small on purpose: it rides in every frame's step, and a step is moved from the router to
/// the shard several times. An inline `RealtimeEvent` (122 bytes) made every step 251
/// bytes; the router's decoded events (a client's first frames only) are boxed instead.
public enum FrameEvent: Sendable {
    case none
    indirect case decoded(RealtimeEvent)
    case decode(prefix: String)

    /// The router's decoding of a frame: `.none` when it carried no event.
    public static func decodedByRouter(_ event: RealtimeEvent?) -> FrameEvent {
        event.map { .decoded($0) } ?? .none
    }
}

/// Groups connections into clients as records arrive, the one part of the analysis that
/// needs every record in order. It tells apart the clients (`ClientKeyMode`; connections
/// of one key that overlap are different clients) and turns each record into the steps of
/// the client it belongs to, so that clients can be analysed apart (`ClientShard`), on
/// one thread or several. Per client it keeps two facts: the connection it holds and when
/// it was last active; they follow the timeline's own rules (a connection ends for the
/// client at its first close frame that reached it, a refused upgrade, or a TCP end it saw).
public struct ClientRouter: Sendable {
    public let options: AnalyzerOptions
    /// The spec's protocol table entry (chosen by its `events`), with its learned dialect.
    private var decoder: any WireProtocol
    /// Per key: its clients that hold no connection, the one to join on top.
    private var idleByKey: [String: IdleClients] = [:]
    /// Per client: its key, the connection it holds, and when it was last active. A client
    /// holds at most one connection but for duplicate ids, kept apart in `moreHeld`: an
    /// array per client cost some 50 bytes each on captures of a million clients.
    private var keyOfClient: [String] = []
    private var held: [ConnectionID?] = []
    private var moreHeld: [Int: [ConnectionID]] = [:]
    private var lastActivity: [Micros] = []
    private var clientOfConnection: [ConnectionID: Int] = [:]
    /// Ids are given in order of opening: anything at or below this was seen before.
    private var highestConnection: ConnectionID = 0
    /// Connections one of whose directions has ended.
    private var halfEnded: Set<ConnectionID> = []
    /// Opens waiting for their upgrade request, which carries the grouping key.
    private var pendingOpens: [ConnectionID: OpenRecord] = [:]
    private var finishing: Finishing?
    private var lastSweep: Micros = 0
    private var now: Micros = 0
    /// How often (in record time) every client's timers are checked, not only the active one's.
    static let sweepInterval: Micros = 1_000_000

    public init(options: AnalyzerOptions) {
        self.options = options
        self.decoder = options.makeEntry(prefix: options.prefix ?? options.spec.prefix)
    }

    /// The prefix in use (given or detected); nil until known.
    public var prefix: String? { decoder.dialect }

    /// How many clients were found so far.
    public var clientCount: Int { groupedClients + lateClients }
    /// Clients made by grouping connections (the per-client arrays' length until the finish
    /// gives them back).
    private var groupedClients = 0
    /// Clients made at the end of the input from connections that never sent their
    /// upgrade request (`RoutedStep.lateClient`): counted, not kept.
    private var lateClients = 0

    /// The steps one record makes, in order. The record is taken: its parts move into
    /// the steps rather than being copied (a caller that keeps it passes a copy).
    public mutating func route(_ record: consuming CaptureRecord, into steps: inout [RoutedStep]) {
        // After the finish every client is done and the router has let go of them.
        guard finishing?.done != true else { return }
        if let t = record.time {
            now = max(now, t)
            if now - lastSweep >= Self.sweepInterval { sweep(to: now, into: &steps) }
        }
        switch consume record {
        case .header, .note, .tunnel, .http:
            break
        case .open(let open):
            pendingOpens[open.conn] = open
        case .upgrade(let upgrade):
            if upgrade.from == .client, pendingOpens[upgrade.conn] != nil {
                assign(upgrade.conn, request: upgrade, t: upgrade.t, into: &steps)
            } else if clientOfConnection[upgrade.conn] == nil, upgrade.conn > highestConnection {
                assign(upgrade.conn, request: upgrade.from == .client ? upgrade : nil, t: upgrade.t, into: &steps)
            }
            if let index = clientOfConnection[upgrade.conn] {
                touch(index, at: upgrade.t)
                // A refused upgrade ends the connection for the client.
                if upgrade.from == .server, upgrade.status != 101 { release(upgrade.conn, of: index) }
                steps.append(.upgrade(client: index, upgrade))
            }
        case .frame(let frame):
            // The connection's client looked up once per frame (again only after grouping it).
            var client = clientOfConnection[frame.conn]
            if client == nil {
                // A frame of a connection already forgotten (after both ends) is not a new client.
                guard frame.conn > highestConnection || pendingOpens[frame.conn] != nil else { break }
                assign(frame.conn, request: nil, t: frame.t, into: &steps)
                client = clientOfConnection[frame.conn]
            }
            var event = FrameEvent.none
            if frame.opcode == .text {
                // Once the prefix is known the shard decodes (on its own thread with several,
                // and its step stays small: a decoded event is boxed, `FrameEvent`).
                if let prefix = decoder.dialect {
                    event = .decode(prefix: prefix)
                } else {
                    event = .decodedByRouter(decoder.event(of: frame))
                }
            }
            if let index = client {
                touch(index, at: frame.t)
                // A close frame that reached the client ends the connection for it.
                if frame.opcode == .close, frame.from == .client || frame.action != .dropped {
                    release(frame.conn, of: index)
                }
                steps.append(.frame(client: index, frame, event))
            }
        case .end(let end) where !end.seenByClient:
            // The upstream leg's ends (proxy captures record both legs): only time moves.
            if let index = clientOfConnection[end.conn] {
                touch(index, at: end.t)
                steps.append(.end(client: index, end))
            }
        case .end(let end):
            if let index = clientOfConnection[end.conn] {
                endConnection(end, of: index, into: &steps)
                // Both directions ended: nothing more can come, so forget the connection
                // (memory stays flat however many connections a capture holds).
                if halfEnded.remove(end.conn) != nil || end.kind == .captureEnd {
                    clientOfConnection.removeValue(forKey: end.conn)
                } else {
                    halfEnded.insert(end.conn)
                }
            } else if pendingOpens[end.conn] != nil {
                assign(end.conn, request: nil, t: end.t, into: &steps)
                if let index = clientOfConnection[end.conn] { endConnection(end, of: index, into: &steps) }
            }
        case .fault(let fault):
            if let conn = fault.conn, let index = clientOfConnection[conn] {
                steps.append(.fault(client: index, fault))
            }
        }
    }

    private mutating func endConnection(_ end: EndRecord, of index: Int, into steps: inout [RoutedStep]) {
        touch(index, at: end.t)
        release(end.conn, of: index)
        steps.append(.end(client: index, end))
    }

    /// The connection ends for the client; holding no other, the client is idle.
    private mutating func release(_ conn: ConnectionID, of index: Int) {
        if held[index] == conn {
            held[index] = moreHeld[index]?.removeFirst()
            if moreHeld[index]?.isEmpty == true { moreHeld.removeValue(forKey: index) }
        } else if let i = moreHeld[index]?.firstIndex(of: conn) {
            moreHeld[index]?.remove(at: i)
            if moreHeld[index]?.isEmpty == true { moreHeld.removeValue(forKey: index) }
            return
        } else {
            return
        }
        guard held[index] == nil else { return }
        let entry = IdleClients.Entry(lastActivity: lastActivity[index], client: index)
        withIdleClients(of: keyOfClient[index]) { idle, isCurrent in idle.becameIdle(entry, isCurrent: isCurrent) }
    }

    /// The client was active at `t`; an idle one's place among its key's idle clients moves.
    private mutating func touch(_ index: Int, at t: Micros) {
        guard lastActivity[index] != t else { return }
        lastActivity[index] = t
        guard held[index] == nil else { return }
        withIdleClients(of: keyOfClient[index]) { idle, isCurrent in
            idle.touched(.init(lastActivity: t, client: index), isCurrent: isCurrent)
        }
    }

    /// `body` on the idle clients of `key`, with the test of an entry being current (its
    /// client idle, at that activity). The set is taken out of the map meanwhile, so it is
    /// changed in place and not copied.
    private mutating func withIdleClients<R>(of key: String,
                                             _ body: (inout IdleClients, (IdleClients.Entry) -> Bool) -> R) -> R {
        var idle = idleByKey.removeValue(forKey: key) ?? IdleClients()
        let result = body(&idle) { [held, lastActivity] entry in
            held[entry.client] == nil && lastActivity[entry.client] == entry.lastActivity
        }
        if !idle.isEmpty { idleByKey[key] = idle }
        return result
    }

    /// A sweep of every client's timers up to `time` (a live proxy calls this on its clock).
    public mutating func sweep(to time: Micros, into steps: inout [RoutedStep]) {
        now = max(now, time)
        lastSweep = now
        steps.append(.sweep(to: now))
    }

    /// The input ended at `time`: connections still waiting for their request become
    /// clients, then every client finishes.
    public mutating func finish(at time: Micros?, into steps: inout [RoutedStep]) {
        finish(at: time) { steps.append($0) }
    }

    /// `finish(at:into:)` handing over the steps one at a time: the connections still
    /// waiting for their request may be very many (a capture stopped under a flood of
    /// connections), and their steps are carried out as they come instead of piling up.
    public mutating func finish(at time: Micros?, emit: (RoutedStep) -> Void) {
        while let step = nextFinishStep(at: time) { emit(step) }
    }

    /// The steps of `finish(at:)` one per call, then nil: for callers that carry each out
    /// on a part of themselves the router cannot lend a closure to.
    public mutating func nextFinishStep(at time: Micros?) -> RoutedStep? {
        if finishing == nil {
            // The waiting opens move to an array in connection order, and the map (grown
            // for the most that ever waited at once) is given back now rather than at the end.
            var waiting = Array(pendingOpens.values)
            pendingOpens = [:]
            waiting.sort { $0.conn < $1.conn }
            finishing = Finishing(end: max(now, time ?? now), waiting: waiting)
        }
        guard var finishing, !finishing.done else { return nil }
        defer { self.finishing = finishing }
        while finishing.next < finishing.waiting.count {
            let open = finishing.waiting[finishing.next]
            finishing.next += 1
            let key = options.clientKey.key(open: open, request: nil)
            if waitingClient(key: key) != nil {
                var steps: [RoutedStep] = []
                assign(open.conn, open: open, request: nil, t: open.t, into: &steps)
                // Joining a client makes exactly its `open` step.
                if let step = steps.last { return step }
                continue
            }
            // No client to join: a new one, opened and finished at once, and nothing more
            // can happen to it, so the router need not remember it either.
            let ordinal = clientCount
            lateClients += 1
            return .lateClient(ordinal: ordinal, info(ordinal: ordinal, key: key, firstSeen: open.t), open, at: finishing.end)
        }
        finishing.done = true
        finishing.waiting = []
        // Nothing more is routed: the maps of connections (sized by the largest number
        // ever open at once) are given back before the report is put together.
        clientOfConnection = [:]
        halfEnded = []
        idleByKey = [:]
        // And the per-client facts: the shards finish the clients from here on.
        keyOfClient = []
        held = []
        moreHeld = [:]
        lastActivity = []
        return .finish(at: finishing.end)
    }

    /// Where `nextFinishStep` stands: the opens that were waiting, in connection order.
    private struct Finishing {
        var end: Micros
        var waiting: [OpenRecord]
        var next = 0
        var done = false
    }

    /// The client of `key` a new connection joins: one with no connection open, the most
    /// recently active (the first of equals); nil when there is none.
    private mutating func waitingClient(key: String) -> Int? {
        guard idleByKey[key] != nil else { return nil }
        return withIdleClients(of: key) { idle, isCurrent in idle.best(isCurrent: isCurrent) }
    }

    /// `waitingClient(key:)`, taken: it is about to hold a connection, so no longer idle.
    private mutating func takeWaitingClient(key: String) -> Int? {
        guard idleByKey[key] != nil else { return nil }
        return withIdleClients(of: key) { idle, isCurrent in
            let best = idle.best(isCurrent: isCurrent)
            if best != nil { idle.becameBusy() }
            return best
        }
    }

    private func info(ordinal: Int, key: String, firstSeen: Micros) -> ClientInfo {
        ClientInfo(id: "\(options.clientIDPrefix)client-\(ordinal + 1)", key: key, firstSeen: firstSeen)
    }

    /// Groups a connection into a client: same key and no open connection means the same
    /// client (sequential connections chain); an overlapping one is a different client.
    /// `open`: the connection's open record when the caller holds it, else it is taken
    /// from those waiting (or made up: a capture may start mid-connection).
    private mutating func assign(_ conn: ConnectionID, open: OpenRecord? = nil, request: UpgradeRecord?, t: Micros,
                                 into steps: inout [RoutedStep]) {
        let open = open ?? pendingOpens.removeValue(forKey: conn)
            ?? OpenRecord(conn: conn, t: t, client: "?", server: "?")
        let key = options.clientKey.key(open: open, request: request)
        let index: Int
        if let waiting = takeWaitingClient(key: key) {
            index = waiting
        } else {
            index = groupedClients
            groupedClients += 1
            let info = info(ordinal: index, key: key, firstSeen: open.t)
            keyOfClient.append(key)
            held.append(nil)
            lastActivity.append(open.t)
            steps.append(.newClient(ordinal: index, info))
        }
        clientOfConnection[conn] = index
        highestConnection = max(highestConnection, conn)
        if held[index] == nil {
            held[index] = open.conn
        } else if held[index] != open.conn, moreHeld[index]?.contains(open.conn) != true {
            moreHeld[index, default: []].append(open.conn)
        }
        lastActivity[index] = open.t
        steps.append(.open(client: index, open))
    }
}

extension WireProtocol {
    /// A text frame's event: the one its record carries when the relay decoded it with
    /// this entry (classified under this analysis's dialect), else decoded from the payload.
    public mutating func event(of frame: FrameRecord) -> RealtimeEvent? {
        if let carried = frame.decoded.event(decodedBy: Self.key) {
            return carried.flatMap { adopt($0) }
        }
        return decode(frame.payload)
    }
}
