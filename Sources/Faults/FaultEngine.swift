import Capture
import JSON
import Synchronization
import Vocabulary

/// The rules of one proxy, shared by all its connections (and the control API). It numbers
/// connections for `conn=N`, knows the proxy's start for `at=`, holds the seed for `prob=`
/// and jitter, and counts what fired for metrics. Thread-safe (a mutex) so that several
/// loops, or the control API on another thread, may share it.
public final class FaultEngine: Sendable {
    /// One installed rule with its id (ids are never reused within an engine).
    public struct Entry: Sendable, Hashable {
        public var id: Int
        public var rule: FaultRule
    }

    /// What the sessions need to see at once: the rules and a version that changes with them.
    public struct Snapshot: Sendable {
        public var version: Int
        public var entries: [Entry]
    }

    struct State {
        var entries: [Entry] = []
        var nextID = 1
        var version = 0
        var connections = 0
        var fired = 0
        var firedByKind: [String: Int] = [:]
        /// Times each installed rule fired (armed on a connection), by rule id.
        var firedByRule: [Int: Int] = [:]
        /// "Apply this rule to connection N now", waiting for that session to take it.
        var pending: [ConnectionID: [FaultRule]] = [:]
    }

    public let seed: UInt64
    /// Capture-relative time of the proxy's start, the origin of `at=`.
    public let proxyStart: Micros
    let state: Mutex<State>

    public init(rules: [FaultRule] = [], seed: UInt64 = 0, proxyStart: Micros = 0) {
        self.seed = seed
        self.proxyStart = proxyStart
        var initial = State()
        for rule in rules {
            initial.entries.append(Entry(id: initial.nextID, rule: rule))
            initial.nextID += 1
        }
        state = Mutex(initial)
    }

    // MARK: Rules (for the command line and the control API)

    /// Installs a rule for all connections, open ones included; returns its id.
    @discardableResult
    public func add(_ rule: FaultRule) -> Int {
        state.withLock { s in
            let id = s.nextID
            s.nextID += 1
            s.entries.append(Entry(id: id, rule: rule))
            s.version += 1
            return id
        }
    }

    /// Removes a rule; its effects stop at each connection's next event. False if unknown.
    @discardableResult
    public func remove(id: Int) -> Bool {
        state.withLock { s in
            guard let index = s.entries.firstIndex(where: { $0.id == id }) else { return false }
            s.entries.remove(at: index)
            s.version += 1
            return true
        }
    }

    public func list() -> [Entry] { state.withLock { $0.entries } }

    /// Removes every rule and pending application (toxiproxy's reset).
    public func reset() {
        state.withLock { s in
            s.entries.removeAll()
            s.pending.removeAll()
            s.version += 1
        }
    }

    /// Queues `rule` for connection `conn`, to act at once, ignoring its scope and start
    /// conditions. The shell then delivers `.faultsChanged` to that connection's session.
    public func applyNow(_ rule: FaultRule, to conn: ConnectionID) {
        state.withLock { s in
            s.pending[conn, default: []].append(rule)
            s.version += 1
        }
    }

    // MARK: Counters

    /// Faults fired so far, in total and by kind (for `GET /metrics`).
    public var firedCount: Int { state.withLock { $0.fired } }
    public var firedByKind: [String: Int] { state.withLock { $0.firedByKind } }
    public var connectionCount: Int { state.withLock { $0.connections } }
    /// How often rule `id` fired (armed on a connection, or answered an upgrade) so far.
    public func firedCount(rule id: Int) -> Int { state.withLock { $0.firedByRule[id] ?? 0 } }

    // MARK: For ConnectionFaults

    /// Counts a connection whose client sent a request (probes without one are not
    /// counted); returns its ordinal (1, 2, ...) for `conn=` and `every=`.
    func countRequest() -> Int {
        state.withLock { s in
            s.connections += 1
            return s.connections
        }
    }

    func snapshot() -> Snapshot { state.withLock { Snapshot(version: $0.version, entries: $0.entries) } }
    var version: Int { state.withLock { $0.version } }

    func takePending(_ conn: ConnectionID) -> [FaultRule] {
        state.withLock { $0.pending.removeValue(forKey: conn) ?? [] }
    }

    func countFiring(kind: String, rule: Int? = nil) {
        state.withLock { s in
            s.fired += 1
            s.firedByKind[kind, default: 0] += 1
            if let rule { s.firedByRule[rule, default: 0] += 1 }
        }
    }
}

extension FaultEngine.Entry {
    /// `{"id":1,"rule":"close:4009,after=30s","kind":"close"}` for the control API.
    public var json: JSONValue {
        .object(JSONObject([(key: "id", value: .int(Int64(id))), (key: "rule", value: .string(rule.text)),
                            (key: "kind", value: .string(rule.kind))]))
    }
}
