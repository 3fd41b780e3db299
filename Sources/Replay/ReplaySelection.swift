import Capture
import Lifecycle
import Vocabulary

/// Which recorded connections a replay plays.
public enum ReplaySelection: Sendable, Hashable {
    /// The first client's connections, in order (a whole reconnect story).
    case firstClient
    /// One connection by its id.
    case connection(ConnectionID)
    /// Every connection of one client: its id as `analyze` prints it (`client-2`), its key
    /// as `analyze` prints it, or a part of the key that only one client's key holds.
    case client(String)
    /// Every connection of every client (`--all-clients`).
    case allClients
}

/// Unusable replay input: the capture holds nothing to replay, or the selection matches
/// nothing. Commands print it and exit 2.
public struct ReplayInputError: Error, Sendable, Hashable, CustomStringConvertible {
    public var message: String
    public init(_ message: String) { self.message = message }
    public var description: String { message }
}

/// One client of the capture as `faultline analyze` names it: its id (`client-2`, in
/// order of first appearance), its grouping key (`127.0.0.1 | BirdRealtime/2.3 |
/// /app/key?protocol=7`) and its connections. The analyzer's own grouping decides
/// (`ClientGrouping`, default `ClientKeyMode`): one key, connections one after another is one
/// client; overlapping connections of one key are different clients.
public struct ReplayClient: Sendable, Hashable {
    public var id: String
    public var key: String
    public var connections: [ConnectionID]
}

/// Reads what a replay needs from a capture in two streaming passes: the first learns each
/// connection's client key (open and upgrade records only), the second keeps the records of
/// the selected connections and nothing else, so other connections' payloads are never held.
public enum ReplayLoader {
    /// The selected connections in order of opening. `open` makes a fresh record source
    /// each time it is called (the capture is read twice).
    public static func load(_ open: () throws -> any RecordSource,
                            selection: ReplaySelection) throws -> [RecordedConnection] {
        let all = try clients(try open())
        let wanted = try select(clients: all, selection: selection)
        var clientOf: [ConnectionID: ReplayClient] = [:]
        for client in all { for conn in client.connections { clientOf[conn] = client } }
        var source = try open()
        var builders: [ConnectionID: RecordedConnection.Builder] = [:]
        var order: [ConnectionID] = []
        while let record = try source.next() {
            guard let conn = record.connection, wanted.contains(conn) else { continue }
            if case .open(let open) = record {
                if builders[conn] == nil {
                    builders[conn] = RecordedConnection.Builder(open)
                    order.append(conn)
                }
                continue
            }
            builders[conn]?.add(record)
        }
        return try order.compactMap { conn in
            guard var connection = builders[conn]?.connection else { return nil }
            if let problem = connection.unsendableHead { throw ReplayInputError(problem) }
            connection.client = clientOf[conn]?.id
            connection.clientKey = clientOf[conn]?.key
            return connection
        }
    }

    /// The clients of the capture as the analyzer groups them, in order of first
    /// appearance (`ClientGrouping`: its grouping depends on when it sees a connection's
    /// close handshake, so it gets every record; no timeline is built).
    static func clients(_ source: any RecordSource) throws -> [ReplayClient] {
        var source = source
        var grouping: ClientGrouping
        do { grouping = try ClientGrouping() } catch { throw ReplayInputError("the built-in bird spec does not load: \(error)") }
        var clients: [ReplayClient] = []
        var index: [String: Int] = [:]
        func take(_ conn: ConnectionID, _ info: ClientInfo) {
            let i = index[info.id] ?? clients.count
            if i == clients.count {
                index[info.id] = i
                clients.append(ReplayClient(id: info.id, key: info.key, connections: []))
            }
            if !clients[i].connections.contains(conn) { clients[i].connections.append(conn) }
        }
        while let record = try source.next() { grouping.observe(record, grouped: take) }
        grouping.finish(grouped: take)
        return clients
    }

    /// The connection ids a selection picks, or an error saying what the capture holds.
    static func select(clients: [ReplayClient], selection: ReplaySelection) throws(ReplayInputError) -> Set<ConnectionID> {
        guard let first = clients.first else {
            throw ReplayInputError("the capture holds no connections (no open records): nothing to replay")
        }
        switch selection {
        case .firstClient:
            return Set(first.connections)
        case .allClients:
            return Set(clients.flatMap(\.connections))
        case .connection(let id):
            let all = clients.flatMap(\.connections)
            guard all.contains(id) else {
                throw ReplayInputError("no connection \(id) in the capture (it holds connections \(describe(all)))")
            }
            return [id]
        case .client(let wanted):
            if let byID = clients.first(where: { $0.id == wanted }) { return Set(byID.connections) }
            var matching = clients.filter { $0.key == wanted }
            if matching.isEmpty { matching = clients.filter { $0.key.contains(wanted) } }
            guard !matching.isEmpty else {
                let known = clients.prefix(10).map { "\($0.id) \"\($0.key)\"" }.joined(separator: ", ")
                throw ReplayInputError("no client matches \"\(wanted)\" (clients in the capture: \(known)\(clients.count > 10 ? ", ..." : ""))")
            }
            guard matching.count == 1 else {
                let named = matching.prefix(10).map { "\($0.id) \"\($0.key)\"" }.joined(separator: ", ")
                throw ReplayInputError("\"\(wanted)\" matches \(matching.count) clients: \(named); give the client id or more of the key")
            }
            return Set(matching[0].connections)
        }
    }

    private static func describe(_ ids: [ConnectionID]) -> String {
        guard let low = ids.min(), let high = ids.max() else { return "none" }
        return low == high ? "\(low)" : "\(low)-\(high)"
    }
}
