import Capture
import CMalloc
import Lifecycle
import Vocabulary

/// Everything a report shows, gathered from the analyzer's events. The engine streams;
/// a report needs the whole picture, so this is where events are kept, bounded per client
/// by `ReportLimits` so that memory stays flat however large the capture is.
public struct AnalysisReport: Sendable {
    public struct Client: Sendable {
        public var info: ClientInfo
        public var connections: [ConnectionLifespan] = []
        /// The client's transitions, their evidence not kept (no report shows it).
        public var transitions: [Transition] = []
        public var faults: [FaultMark] = []
        public var findings: [Finding] = []
        /// Connection ids in the order they were grouped under this client.
        public var connectionIDs: [ConnectionID] = []
        /// How many of each list were left out of the middle (see `ReportLimits`).
        public var omitted = Omitted()
        /// All findings of this client, kept or omitted.
        public var findingCount = 0
        /// The client's state at the end of the input (nil before its first transition).
        public var finalState: String?
        /// Checks still open when the input ended (at most one per rule and connection).
        public var undetermined: [Undetermined] = []
        /// The spec that judged this client, when the report's clients were judged by
        /// several (`specsUsed`); nil when the report's `spec` judged them all.
        public var spec: String?
    }

    /// Entries left out of a client's lists: the first and last ones are kept.
    public struct Omitted: Sendable, Equatable {
        public var transitions = 0
        public var connections = 0
        public var faults = 0
        public var findings = 0
        public var isEmpty: Bool { self == Omitted() }
    }

    public var spec: LifecycleSpec
    /// The specs that judged the clients and how many each, when more than one did
    /// (`judgedPerClient`); empty when `spec` judged every client.
    public var specsUsed: [SpecUse] = []
    public var inputs: [String]
    /// How connections were grouped into clients, for every report.
    public var grouping: String
    public var prefix: String?
    /// Each client kept densely, made whole when read (`ReportClients`).
    public var clients: ReportClients
    /// The findings kept (all of them unless a client exceeded its limit), in the order found.
    public var findings: ReportFindings
    /// Problems met reading the input that did not stop it.
    public var warnings: [String]
    /// The last record time: the right edge of timelines.
    public var endTime: Micros
    /// Totals over everything seen, kept or omitted.
    public var errorCount: Int
    public var warningCount: Int
    public var findingCount: Int
    public var connectionCount: Int
    /// Checks the input ended too early to decide, over all clients.
    public var undetermined: [Undetermined] = []
    /// Rules of the spec this run did not check at all, with the reason.
    public var unchecked: [UncheckedRule] = []
    /// Which findings make the exit status 1 (`--fail-on`).
    public var failOn: FailOn = .error
    /// The capture's wall-clock start (microseconds since 1970, from its header), for
    /// absolute times beside the relative ones; nil when unknown.
    public var startedAt: Int64?
    /// Forward mode: channel-auth HTTP requests and the subscribes that used their signatures.
    public var authRequests: [AuthRequestLink] = []
    /// Each reported connection's replica (`analyze --merge`, or a capture that names its
    /// replica); empty otherwise, and then no report mentions replicas.
    public var replicas: [ConnectionID: String] = [:]

    /// 1 when a finding at or above `failOn` exists, else 0 (spec section 5, `--fail-on`).
    public var exitStatus: Int32 { failOn.fails(errors: errorCount, warnings: warningCount) ? 1 : 0 }

    /// "2 clients, 5 connections: 1 error, 0 warnings", and ", 1 undetermined" when a check
    /// could not be decided.
    public var summaryLine: String {
        var line = "\(clients.count) client\(clients.count == 1 ? "" : "s"), \(connectionCount) connection\(connectionCount == 1 ? "" : "s"): "
            + "\(errorCount) error\(errorCount == 1 ? "" : "s"), \(warningCount) warning\(warningCount == 1 ? "" : "s")"
        if !undetermined.isEmpty { line += ", \(undetermined.count) undetermined" }
        return line
    }
}

/// `--fail-on`: the least severe finding that makes the exit status 1.
public enum FailOn: String, Sendable, CaseIterable {
    case error, warning, never

    public func fails(errors: Int, warnings: Int) -> Bool {
        switch self {
        case .error: errors > 0
        case .warning: errors + warnings > 0
        case .never: false
        }
    }

    /// Whether a finding of this severity fails the run (JUnit `<failure>`).
    public func fails(_ severity: Severity) -> Bool {
        switch self {
        case .error: severity == .error
        case .warning: true
        case .never: false
        }
    }
}

/// How much of each client's history a report keeps. Each list (transitions, connections,
/// faults, findings) keeps its first `head` and last `tail` entries and counts the rest;
/// totals and the exit status always cover everything. The default keeps 40 of each per
/// client (the first and last 20): a QA session's client seldom goes through more, so
/// mostly long or synthetic captures are trimmed, and the report says how much.
public struct ReportLimits: Sendable {
    public var head: Int
    public var tail: Int
    public init(head: Int, tail: Int) { self.head = head; self.tail = tail }
    public static let standard = ReportLimits(head: 20, tail: 20)
    public static let unlimited = ReportLimits(head: .max, tail: 0)
}

/// Collects analyzer events into a report, keeping per client what `ReportLimits` allows.
public struct ReportBuilder: Sendable {
    private struct ClientLog: Sendable {
        var info: ClientInfo
        var connections: BoundedLog<KeptConnection>
        var transitions: BoundedLog<KeptTransition>
        var faults: BoundedLog<FaultMark>
        /// With their order of discovery, to rebuild the report-wide list.
        var findings: BoundedLog<NumberedFinding>
        var connectionIDs: BoundedLog<ConnectionID>
        var finalState: String?
        var undetermined: [Undetermined] = []
        /// The client's number in order of first appearance, over all shards.
        var ordinal: Int

        init(info: ClientInfo, ordinal: Int) {
            self.info = info
            self.ordinal = ordinal
            connections = BoundedLog()
            transitions = BoundedLog()
            faults = BoundedLog()
            findings = BoundedLog()
            connectionIDs = BoundedLog()
        }
    }

    private struct SequencedFinding: Sendable {
        var number: EventOrder
        var finding: Finding
    }

    /// Where a finding of the report lies: in `clients[client].findings`, or in the
    /// stray findings (`client` -1), at `index`; with its order of discovery.
    private struct FindingPlace {
        var number: EventOrder
        var client: Int
        var index: Int
    }

    /// A finding as a client's log keeps it, with its order of discovery.
    private struct NumberedFinding: Sendable {
        var number: EventOrder
        var finding: KeptFinding
    }

    /// Where a finding stands in the order one thread finds them: the routed step that
    /// revealed it, then the client (a sweep or the finish reveals several clients' in
    /// client order), then the order within the shard. One thread numbers them 1, 2, ...
    struct EventOrder: Comparable, Sendable {
        var step: Int
        var client: Int
        var index: Int
        static func < (a: EventOrder, b: EventOrder) -> Bool {
            (a.step, a.client, a.index) < (b.step, b.client, b.index)
        }
    }

    public let limits: ReportLimits
    /// From how many clients `build` hands the heap's free pages back first.
    static let clientsWorthATrim = 1000
    private var clients: [ClientLog] = []
    /// Each client's place in `clients`, by its id.
    private var index = PlaceIndex()
    /// `index` does not cover `clients` (after `merged`) and is rebuilt before the next event.
    private var indexIsStale = false
    /// Findings of no known client (none in practice), kept whole.
    private var strayFindings: [SequencedFinding] = []
    private var findingNumber = 0
    private var undetermined: [(order: EventOrder, check: Undetermined)] = []
    /// The routed step being added (`add(_:step:)`); nil when events come one thread's way.
    private var step: Int?
    private var errorCount = 0
    private var warningCount = 0
    private var endTime: Micros = 0
    /// The texts the logs keep, each held once (`StringPool`).
    private var texts = StringPool()
    /// The state names of the kept transitions, numbered (`KeptTransition`).
    private var names = NameTable()

    public init(limits: ReportLimits = .standard) {
        self.limits = limits
    }

    public mutating func add(_ events: [AnalysisEvent]) {
        for event in events { add(event) }
    }

    /// Adds what one routed step revealed in one shard (`analyze --jobs`): findings keep
    /// their place in the order one thread would find them, so that `merged` builds the
    /// same report.
    public mutating func add(_ events: [AnalysisEvent], step: Int, newClient ordinal: Int? = nil) {
        rebuildIndexIfStale()
        self.step = step
        defer { self.step = nil }
        for event in events {
            if case .client(let info) = event, let ordinal {
                appendClient(ClientLog(info: info, ordinal: ordinal))
                endTime = max(endTime, info.firstSeen)
            } else {
                add(event)
            }
        }
    }

    /// One builder of the shards' builders (made with the same limits), as if one had
    /// collected every event: clients in order of appearance, findings in order found.
    /// Each part is released once its clients are moved over, so merging a report of very
    /// many clients never holds every part and the whole at once.
    public static func merged(_ parts: consuming [ReportBuilder]) -> ReportBuilder {
        var parts = parts
        // One part (one thread's numbered events) is taken as it is: appended to an empty
        // builder its clients would be copied, the two lists held at once.
        var merged = parts.count == 1 ? parts.removeLast() : ReportBuilder(limits: parts.first?.limits ?? .standard)
        merged.index.removeAll()
        merged.clients.reserveCapacity(parts.reduce(merged.clients.count) { $0 + $1.clients.count })
        for i in parts.indices {
            var part = parts[i]
            parts[i] = ReportBuilder(limits: merged.limits)
            part.renumberNames(into: &merged.names)
            merged.clients += part.clients
            merged.strayFindings += part.strayFindings
            merged.findingNumber += part.findingNumber
            merged.undetermined += part.undetermined
            merged.errorCount += part.errorCount
            merged.warningCount += part.warningCount
            merged.endTime = max(merged.endTime, part.endTime)
        }
        if !merged.clients.indices.dropFirst().allSatisfy({ merged.clients[$0 - 1].ordinal < merged.clients[$0].ordinal }) {
            merged.clients.sort { $0.ordinal < $1.ordinal }
        }
        // Built again only if events are added after the merge (most merges are final).
        merged.indexIsStale = !merged.clients.isEmpty
        merged.strayFindings.sort { $0.number < $1.number }
        merged.undetermined.sort { $0.order < $1.order }
        return merged
    }

    /// This builder's transitions with their states numbered as in `table`, which takes
    /// the names it lacks. Shards meet the same specs' states, mostly in the same order, so
    /// most merges change no number and visit no log.
    private mutating func renumberNames(into table: inout NameTable) {
        let numbers = table.adopt(names)
        names = table
        guard numbers.indices.contains(where: { numbers[$0] != UInt32(truncatingIfNeeded: $0) }) else { return }
        let renumbered = { (n: UInt32) in n == NameTable.none ? n : numbers[Int(n)] }
        for i in clients.indices {
            clients[i].transitions.updateEach { kept in
                kept.from = renumbered(kept.from)
                kept.to = renumbered(kept.to)
            }
        }
    }

    /// The order of the next finding or undetermined check of client `i` (nil: no client).
    private mutating func nextOrder(client i: Int?) -> EventOrder {
        findingNumber += 1
        guard let step else { return EventOrder(step: findingNumber, client: 0, index: 0) }
        return EventOrder(step: step, client: i.map { clients[$0].ordinal } ?? -1, index: findingNumber)
    }

    private mutating func rebuildIndexIfStale() {
        guard indexIsStale else { return }
        indexIsStale = false
        index.removeAll()
        let all = clients
        for (i, client) in all.enumerated() { index.set(client.info.id, at: i) { all[$0].info.id } }
    }

    /// The place in `clients` of the client `id`.
    private func place(of id: String) -> Int? {
        index.place(of: id) { clients[$0].info.id }
    }

    /// A client after the others, found by its id from now on.
    private mutating func appendClient(_ log: ClientLog) {
        clients.append(log)
        let all = clients
        index.set(log.info.id, at: all.count - 1) { all[$0].info.id }
    }

    public mutating func add(_ event: AnalysisEvent) {
        rebuildIndexIfStale()
        switch event {
        case .client(let info):
            appendClient(ClientLog(info: info, ordinal: clients.count))
            endTime = max(endTime, info.firstSeen)
        case .connection(let conn, let client):
            if let i = place(of: client) { clients[i].connectionIDs.append(conn, limits: limits) }
        case .transition(let t):
            if let i = place(of: t.client) {
                let kept = KeptTransition(t, cause: texts.shared(t.cause), names: &names)
                clients[i].transitions.append(kept, limits: limits)
                clients[i].finalState = t.to
            }
            endTime = max(endTime, t.t)
        case .finding(let f):
            switch f.severity {
            case .error: errorCount += 1
            case .warning: warningCount += 1
            }
            let i = place(of: f.client)
            let number = nextOrder(client: i)
            if let i {
                clients[i].findings.append(NumberedFinding(number: number, finding: KeptFinding(f)), limits: limits)
            } else {
                strayFindings.append(SequencedFinding(number: number, finding: f))
            }
            endTime = max(endTime, f.t)
        case .connectionEnded(let s):
            if let i = place(of: s.client) {
                clients[i].connections.append(KeptConnection(s, end: texts.shared(s.end)), limits: limits)
            }
            endTime = max(endTime, s.endedAt ?? s.openedAt)
        case .fault(let mark):
            if let i = place(of: mark.client) { clients[i].faults.append(mark, limits: limits) }
            endTime = max(endTime, mark.t)
        case .undetermined(let u):
            // At most one per rule and client (emitted once, at the end): no bound needed.
            let i = place(of: u.client)
            if let i { clients[i].undetermined.append(u) }
            let order = EventOrder(step: step ?? 0, client: i.map { clients[$0].ordinal } ?? -1,
                                   index: undetermined.count)
            undetermined.append((order, u))
        }
    }

    /// The report. Consumes the builder, whose per-client lists become the report's
    /// without being copied (the two would otherwise be held at once).
    public consuming func build(spec: LifecycleSpec, inputs: [String], grouping: String, prefix: String?,
                      warnings: [String] = [], endTime: Micros? = nil, unchecked: [UncheckedRule] = [],
                      failOn: FailOn = .error, startedAt: Int64? = nil) -> AnalysisReport {
        index.removeAll()   // not needed any more: given back before the report's clients are made
        // The analysis' own state is freed by now (at 2,000 clients of a long capture some
        // 16 MB of timelines, connection views and rules), but glibc keeps freed pages
        // resident in its heap, and the report's entries made next partly took new pages:
        // peak RSS rose 5 MB while the report was built, over the analysis' own peak (1 GB
        // of synthetic capture, docs/benchmarks.md "Flat memory, sixth round"). The free
        // pages go back to the system first, and the report takes what it needs. Only for
        // a report of many clients: the UI builds one client's report per page request,
        // in a proxy whose heap is busy relaying.
        if clients.count >= Self.clientsWorthATrim { _ = malloc_trim(0) }
        // The report-wide list of findings in order found, made at the end from where each
        // finding lies: a list of the findings themselves with their numbers (136 bytes
        // each) and its copy in order were both held at the report's peak, 5.5 MB at
        // 22,000 findings.
        var places = strayFindings.indices.map { FindingPlace(number: strayFindings[$0].number, client: -1, index: $0) }
        var connectionCount = 0
        var place = self.clients.count
        // Each client's lists stay in the logs' dense form: the report's types are made
        // one client at a time as the report is written (`ReportClients`).
        let stored = Self.taken(&self.clients) { log -> ReportClients.Stored in
            place -= 1
            let numbered = log.findings.elements
            places += numbered.indices.map { FindingPlace(number: numbered[$0].number, client: place, index: $0) }
            connectionCount += log.connectionIDs.total
            var client = AnalysisReport.Client(info: log.info)
            let connections = log.connections.elements
            let inOrder = connections.indices.dropFirst().allSatisfy { connections[$0 - 1].conn <= connections[$0].conn }
            client.faults = log.faults.elements
            client.connectionIDs = log.connectionIDs.elements
            client.omitted = AnalysisReport.Omitted(
                transitions: log.transitions.omitted, connections: max(log.connections.omitted, log.connectionIDs.omitted),
                faults: log.faults.omitted, findings: log.findings.omitted)
            client.findingCount = log.findings.total
            client.finalState = log.finalState
            client.undetermined = log.undetermined
            return ReportClients.Stored(rest: client, transitions: log.transitions.elements,
                                        connections: inOrder ? connections : connections.sorted { $0.conn < $1.conn },
                                        findings: numbered.map(\.finding))
        }
        places.sort { $0.number < $1.number }
        let findings = ReportFindings(entries: places.map { at in
            if at.client < 0 {
                let stray = strayFindings[at.index].finding
                return ReportFindings.Entry(client: stray.client, finding: KeptFinding(stray))
            }
            return ReportFindings.Entry(client: stored[at.client].rest.info.id, finding: stored[at.client].findings[at.index])
        })
        places = []
        let clients = ReportClients(stored: stored, names: names)
        var report = AnalysisReport(spec: spec, inputs: inputs, grouping: grouping, prefix: prefix, clients: clients,
                                    findings: findings, warnings: warnings,
                                    endTime: max(self.endTime, endTime ?? 0), errorCount: errorCount,
                                    warningCount: warningCount, findingCount: findingNumber, connectionCount: connectionCount)
        report.undetermined = undetermined.map(\.check)
        report.unchecked = unchecked
        report.failOn = failOn
        report.startedAt = startedAt
        return report
    }

    /// `logs` mapped in order and emptied as it goes: taken from the end, the list is
    /// moved to a smaller array whenever it holds less than three quarters of its room, so
    /// that a million clients' logs and their report entries are never both held whole.
    private static func taken<T>(_ logs: inout [ClientLog], _ transform: (ClientLog) -> T) -> [T] {
        var reversed: [T] = []
        reversed.reserveCapacity(logs.count)
        while let log = logs.popLast() {
            reversed.append(transform(log))
            if logs.count >= 4096, logs.count < logs.capacity / 4 * 3 {
                var smaller: [ClientLog] = []
                smaller.reserveCapacity(logs.count)
                smaller.append(contentsOf: logs)
                logs = smaller
            }
        }
        logs = []
        reversed.reverse()
        return reversed
    }
}

/// Report output formats.
public enum ReportFormat: String, Sendable, CaseIterable {
    case text, json, junit, html

    public func render(_ report: AnalysisReport) -> String {
        switch self {
        case .text: TextReport.render(report)
        case .json: JSONReport.render(report)
        case .junit: JUnitReport.render(report)
        case .html: HTMLReport.render(report)
        }
    }

    /// The report in pieces of about 64 KiB, so writing a large report to a file never
    /// holds all of it.
    public func render(_ report: AnalysisReport, emit: (String) -> Void) {
        switch self {
        case .text: TextReport.render(report, emit: emit)
        case .json: JSONReport.render(report, emit: emit)
        case .junit: JUnitReport.render(report, emit: emit)
        case .html: HTMLReport.render(report, emit: emit)
        }
    }
}

/// Hands the text built so far to `emit` once it reaches 64 KiB: the streamed reports call
/// it after each client (or table row), so a report's text is never held whole.
func emitWhenFull(_ out: inout String, _ emit: (String) -> Void) {
    if out.utf8.count >= 1 << 16 {
        emit(out)
        out = ""
    }
}

/// Seconds with three decimals: "14.200".
func seconds(_ t: Micros) -> String {
    let ms = (Double(t) / 1000).rounded()
    let whole = Int64(ms / 1000)
    let frac = Int64(abs(ms)) % 1000
    let pad = frac < 10 ? "00" : frac < 100 ? "0" : ""
    return "\(t < 0 && whole == 0 ? "-" : "")\(whole).\(pad)\(frac)"
}

/// Escapes text for XML and HTML attributes and content: the JUnit and HTML reports' one
/// escaping function. Markup characters become references. Control characters other than
/// tab, LF and CR, C1 controls (U+0080 to U+009F), the line and paragraph separators, and
/// the bidirectional overrides and isolates (which make a page show text in another order
/// than it holds) are written as the terminal writes them (`\x1b`, `\u{202E}`): visible,
/// never acted on, and well-formed, since XML 1.0 forbids C0 controls even as references
/// and HTML maps C1 references to other characters. U+FFFE and U+FFFF, which XML forbids
/// too, become "?".
package func escapeXML(_ text: String) -> String {
    var out = ""
    out.reserveCapacity(text.count)
    for scalar in text.unicodeScalars {
        switch scalar {
        case "&": out += "&amp;"
        case "<": out += "&lt;"
        case ">": out += "&gt;"
        case "\"": out += "&quot;"
        case "'": out += "&#39;"
        case "\n", "\t", "\r": out.unicodeScalars.append(scalar)
        case _ where DisplayUnsafe.contains(scalar): out += DisplayUnsafe.escaped(String(scalar))
        case "\u{FFFE}", "\u{FFFF}": out += "?"
        default: out.unicodeScalars.append(scalar)
        }
    }
    return out
}
