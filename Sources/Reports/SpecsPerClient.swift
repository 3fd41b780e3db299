import Lifecycle

/// A spec and how many clients it judged: what a report lists when the clients of one
/// input were judged by more than one spec (each by the pack detected on its own upgrade
/// and first messages).
public struct SpecUse: Sendable {
    public var spec: LifecycleSpec
    public var clients: Int

    public init(spec: LifecycleSpec, clients: Int) {
        self.spec = spec
        self.clients = clients
    }
}

extension SpecUse {
    /// "specs per client: socketio 2 clients, bird 1 client (...)" when `uses` holds more
    /// than one spec; nil otherwise.
    public static func line(_ uses: [SpecUse], fallback: String) -> String? {
        guard uses.count > 1 else { return nil }
        let counts = uses.map { "\($0.spec.name) \($0.clients) client\($0.clients == 1 ? "" : "s")" }
        return "specs per client: \(counts.joined(separator: ", ")) (each client judged by the pack detected on its "
            + "upgrade and first messages, else by \(fallback); --spec judges all by one)"
    }
}

extension AnalysisReport {
    /// The spec that judged `client`: its own when several judged, else the report's.
    public func spec(of client: Client) -> LifecycleSpec {
        guard let name = client.spec, let use = specsUsed.first(where: { $0.spec.name == name }) else { return spec }
        return use.spec
    }

    /// The text report's header line when several specs judged (`SpecUse.line`); nil otherwise.
    public var specsLine: String? { SpecUse.line(specsUsed, fallback: spec.name) }

    /// Records which spec judged each client, `numbers` giving each client's (in report
    /// order) index into `specs`, whose first is the fallback the report was built with.
    /// One spec used: the report is that spec's, as if it alone had been chosen. Several:
    /// `specsUsed` lists them and each client names its own. Counts that do not match the
    /// clients (never expected) leave the report as it is.
    public mutating func judgedPerClient(specs: [LifecycleSpec], numbers: [Int]) {
        guard numbers.count == clients.count, numbers.allSatisfy({ specs.indices.contains($0) }) else { return }
        var counts = Array(repeating: 0, count: specs.count)
        for number in numbers { counts[number] += 1 }
        let used = counts.indices.filter { counts[$0] > 0 }
        guard used.count > 1 else {
            if let only = used.first { spec = specs[only] }
            return
        }
        specsUsed = used.map { SpecUse(spec: specs[$0], clients: counts[$0]) }
        for i in clients.indices { clients[i].spec = specs[numbers[i]].name }
    }
}
