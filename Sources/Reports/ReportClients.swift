import Lifecycle
import Vocabulary

/// A report's clients, each kept in the builder's dense form (`ReportBuilder.KeptTransition`,
/// `KeptConnection`, `KeptFinding`) and made whole when it is read: a renderer walks the
/// clients one at a time, so only the client it is writing exists as `Transition`s,
/// `ConnectionLifespan`s and `Finding`s. Built whole, the report of 2,000 clients with
/// every log full (1 GB of synthetic capture) took 31-33 MiB while it was written, more
/// than the analysis state it replaced, and made the run's peak (docs/benchmarks.md,
/// "Flat memory, seventh round"); kept dense it is the builder's logs, about a third.
///
/// Reading a client rebuilds its lists, so a renderer reads each client once per pass
/// (`for client in report.clients`) rather than by index in a loop. Setting a client
/// stores it densely again: a transition's evidence is not kept (no report shows it), and
/// every kept entry is the client's own (its id is the client's).
public struct ReportClients: RandomAccessCollection, MutableCollection, ExpressibleByArrayLiteral, Sendable {
    /// One client: all but its three large lists as the report shows them, those lists dense.
    struct Stored: Sendable {
        /// The client with `transitions`, `connections` and `findings` empty.
        var rest: AnalysisReport.Client
        var transitions: [ReportBuilder.KeptTransition]
        var connections: [ReportBuilder.KeptConnection]
        var findings: [ReportBuilder.KeptFinding]
    }

    private var stored: [Stored]
    /// The kept transitions' state names.
    private var names: NameTable

    init(stored: [Stored], names: NameTable) {
        self.stored = stored
        self.names = names
    }

    public init(_ clients: some Sequence<AnalysisReport.Client>) {
        stored = []
        names = NameTable()
        for client in clients { stored.append(Self.stored(client, names: &names)) }
    }

    public init(arrayLiteral clients: AnalysisReport.Client...) { self.init(clients) }

    public var startIndex: Int { 0 }
    public var endIndex: Int { stored.count }

    public subscript(position: Int) -> AnalysisReport.Client {
        get {
            let entry = stored[position]
            var client = entry.rest
            let id = client.info.id
            client.transitions = entry.transitions.map { $0.transition(of: id, names: names) }
            client.connections = entry.connections.map { $0.lifespan(of: id) }
            client.findings = entry.findings.map { $0.finding(of: id) }
            return client
        }
        set { stored[position] = Self.stored(newValue, names: &names) }
    }

    /// The clients without their transitions, connections and findings (lists empty), made
    /// without rebuilding those lists: for the passes that show none of them.
    var withoutLists: LazyMapCollection<Range<Int>, AnalysisReport.Client> {
        let stored = self.stored
        return indices.lazy.map { stored[$0].rest }
    }

    /// Client `position`'s transitions alone.
    func transitions(at position: Int) -> [Transition] {
        let id = stored[position].rest.info.id
        return stored[position].transitions.map { $0.transition(of: id, names: names) }
    }

    private static func stored(_ client: AnalysisReport.Client, names: inout NameTable) -> Stored {
        var rest = client
        rest.transitions = []
        rest.connections = []
        rest.findings = []
        return Stored(rest: rest,
                      transitions: client.transitions.map { ReportBuilder.KeptTransition($0, cause: $0.cause, names: &names) },
                      connections: client.connections.map { ReportBuilder.KeptConnection($0, end: $0.end) },
                      findings: client.findings.map { ReportBuilder.KeptFinding($0) })
    }
}

/// The report-wide findings in the order found, each kept densely with its client's id and
/// made whole when read (as `ReportClients` does a client's): at 22,000 findings kept, a
/// list of `Finding`s beside the clients' was some 6 MB more while the report was written.
public struct ReportFindings: RandomAccessCollection, ExpressibleByArrayLiteral, Equatable, Sendable {
    struct Entry: Sendable {
        var client: String
        var finding: ReportBuilder.KeptFinding
    }

    private var entries: [Entry]

    init(entries: [Entry]) { self.entries = entries }

    public init(_ findings: some Sequence<Finding>) {
        entries = findings.map { Entry(client: $0.client, finding: ReportBuilder.KeptFinding($0)) }
    }

    public init(arrayLiteral findings: Finding...) { self.init(findings) }

    public var startIndex: Int { 0 }
    public var endIndex: Int { entries.count }

    public subscript(position: Int) -> Finding {
        entries[position].finding.finding(of: entries[position].client)
    }

    public static func == (a: ReportFindings, b: ReportFindings) -> Bool { a.elementsEqual(b) }
}
