import Synchronization
import Vocabulary
import WebSocket

/// Where the operator and the relay sessions meet for the intercept: which connections are
/// paused, the messages each session holds (as it last published them) and the decisions
/// waiting for their session. One per proxy, shared by every connection's `RelayConfig` and
/// the control API (`/intercept`); thread-safe, since sessions may run on other loops.
///
/// The session stays the one that decides: the control API writes here, then tells the
/// connection that something changed (`ControlBackend.faultsChanged`), and the session
/// takes its decisions on that event (`RelaySession+Intercept`).
public final class InterceptDesk: Sendable {
    /// A held message as the control API lists it.
    public struct Listed: Sendable, Hashable {
        public var conn: ConnectionID
        public var id: Int
        public var from: Side
        public var opcode: Opcode
        public var payload: [UInt8]
        public var heldAt: Micros
        public var deadline: Micros
    }

    private struct State {
        var everyConnection: InterceptPause?
        var pauses: [ConnectionID: InterceptPause] = [:]
        var held: [ConnectionID: [Listed]] = [:]
        var overflowed: [ConnectionID: Int] = [:]
        var decisions: [ConnectionID: [(id: Int, decision: InterceptDecision)]] = [:]
    }

    private let state = Mutex(State())

    public init() {}

    /// Pauses connection `conn`, or every connection (new ones too) when nil.
    public func pause(_ conn: ConnectionID?, _ pause: InterceptPause) {
        state.withLock {
            if let conn { $0.pauses[conn] = pause } else { $0.everyConnection = pause }
        }
    }

    /// Ends the pause of `conn` (nil: every pause); its session then forwards what it holds.
    public func resume(_ conn: ConnectionID?) {
        state.withLock {
            if let conn {
                $0.pauses[conn] = nil
            } else {
                $0.everyConnection = nil
                $0.pauses.removeAll()
            }
        }
    }

    /// The pause that applies to `conn`: its own, else the one for every connection.
    public func pause(for conn: ConnectionID) -> InterceptPause? {
        state.withLock { $0.pauses[conn] ?? $0.everyConnection }
    }

    /// Every pause in force: per connection (nil: every connection).
    public func pauses() -> [(conn: ConnectionID?, pause: InterceptPause)] {
        state.withLock { state in
            (state.everyConnection.map { [(nil, $0)] } ?? []) + state.pauses.sorted { $0.key < $1.key }.map { ($0.key, $0.value) }
        }
    }

    /// Queues the operator's decision for held message `id` of `conn`; false when that
    /// message is not held there (decided already, released, or never held).
    public func decide(_ conn: ConnectionID, id: Int, _ decision: InterceptDecision) -> Bool {
        state.withLock { state in
            guard let index = state.held[conn]?.firstIndex(where: { $0.id == id }) else { return false }
            state.held[conn]?.remove(at: index)
            state.decisions[conn, default: []].append((id, decision))
            return true
        }
    }

    /// Every held message, by connection and then arrival; and per connection how many
    /// matched a pause but went on unheld because its queue was full.
    public func listed() -> (held: [Listed], overflowed: [ConnectionID: Int]) {
        state.withLock { state in
            (state.held.keys.sorted().flatMap { state.held[$0] ?? [] }, state.overflowed)
        }
    }

    // MARK: The session's side

    /// The decisions waiting for `conn`'s session, in the order they were made.
    func takeDecisions(_ conn: ConnectionID) -> [(id: Int, decision: InterceptDecision)] {
        state.withLock { $0.decisions.removeValue(forKey: conn) ?? [] }
    }

    /// What `conn`'s session holds now (an empty queue is forgotten with its decisions).
    func publish(_ conn: ConnectionID, queue: InterceptQueue) {
        let listed = queue.held.map {
            Listed(conn: conn, id: $0.id, from: $0.record.from, opcode: $0.record.opcode, payload: $0.record.payload,
                   heldAt: $0.heldAt, deadline: $0.deadline)
        }
        state.withLock { state in
            state.held[conn] = listed.isEmpty ? nil : listed
            state.overflowed[conn] = queue.overflowed == 0 ? nil : queue.overflowed
        }
    }

    /// `conn` is over: its pause and anything published for it go.
    func forget(_ conn: ConnectionID) {
        state.withLock { state in
            state.pauses[conn] = nil
            state.held[conn] = nil
            state.overflowed[conn] = nil
            state.decisions[conn] = nil
        }
    }
}
