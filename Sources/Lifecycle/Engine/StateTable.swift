/// A client's state, as a number into its shard's `StateTable`: two bytes per client
/// instead of a string, and a state change compares numbers.
public struct StateID: Sendable, Hashable {
    let index: UInt16
}

/// The state names of the specs one shard runs (the spec and its connection-level
/// fallback), each numbered once, so a client switching specs keeps its number. Built once
/// per shard; names are looked up by number only when a transition is reported.
public final class StateTable: Sendable {
    private let names: [String]

    /// Every state a spec can put a client in: its five named states and its backoff
    /// phases' states. A spec names a handful; the table keeps the first 65,536 distinct
    /// names (`id(of:)` finds no later one, and its caller falls back to a named state).
    public init(specs: [LifecycleSpec]) {
        var names: [String] = []
        for spec in specs {
            let s = spec.states
            for name in [s.initial, s.connecting, s.connected, s.disconnected, s.failed] + spec.backoff.phases.map(\.state)
            where !names.contains(name) {
                names.append(name)
            }
        }
        self.names = Array(names.prefix(Int(UInt16.max) + 1))
    }

    /// The number of `name`; nil for a name none of the specs has.
    public func id(of name: String) -> StateID? {
        names.firstIndex(of: name).map { StateID(index: UInt16($0)) }
    }

    public func name(of id: StateID) -> String { names[Int(id.index)] }
}

/// The numbers of one spec's named states, looked up once per spec (`RulePlan`).
struct SpecStates: Sendable {
    let table: StateTable
    let initial, connecting, connected, disconnected, failed: StateID

    init(_ spec: LifecycleSpec, table: StateTable) {
        self.table = table
        // The table was built from this spec, so every lookup finds its name.
        let first = StateID(index: 0)
        initial = table.id(of: spec.states.initial) ?? first
        connecting = table.id(of: spec.states.connecting) ?? first
        connected = table.id(of: spec.states.connected) ?? first
        disconnected = table.id(of: spec.states.disconnected) ?? first
        failed = table.id(of: spec.states.failed) ?? first
    }
}
