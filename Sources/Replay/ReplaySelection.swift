import Capture

/// Which recorded connections a replay plays.
public enum ReplaySelection: Sendable, Hashable {
    /// The first client's connections, in order (a whole reconnect story).
    case firstClient
    /// One connection by its id.
    case connection(ConnectionID)
    /// Every connection of one client, by its key (or a unique part of it).
    case client(String)
}

/// Unusable replay input: the capture holds nothing to replay, or the selection matches
/// nothing. Commands print it and exit 2.
public struct ReplayInputError: Error, Sendable, Hashable, CustomStringConvertible {
    public var message: String
    public init(_ message: String) { self.message = message }
    public var description: String { message }
}

/// Groups connections into clients the way the analyzer does by default: the client's IP
/// address (port left out, it changes with every connection), its User-Agent and the
/// request's path (query left out). "127.0.0.1 Python/3.11 websockets/13.1 /app/key".
public enum ReplayClientKey {
    public static func of(clientAddress: String, request: UpgradeRecord?) -> String {
        let agent = request?.header("User-Agent") ?? "-"
        let path = request?.target.map { String($0.split(separator: "?", maxSplits: 1, omittingEmptySubsequences: false)[0]) } ?? "-"
        return "\(host(of: clientAddress)) \(agent) \(path)"
    }

    /// "10.0.0.7:5123" -> "10.0.0.7"; "[::1]:5123" -> "::1".
    static func host(of address: String) -> String {
        if address.hasPrefix("["), let close = address.firstIndex(of: "]") {
            return String(address[address.index(after: address.startIndex)..<close])
        }
        guard let colon = address.lastIndex(of: ":") else { return address }
        return String(address[..<colon])
    }
}

/// Reads what a replay needs from a capture in two streaming passes: the first learns each
/// connection's client key (open and upgrade records only), the second keeps the records of
/// the selected connections and nothing else, so other connections' payloads are never held.
public enum ReplayLoader {
    /// The selected connections in order of opening. `open` makes a fresh record source
    /// each time it is called (the capture is read twice).
    public static func load(_ open: () throws -> any RecordSource,
                            selection: ReplaySelection) throws -> [RecordedConnection] {
        let wanted = try select(keys: clientKeys(try open()), selection: selection)
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
        return order.compactMap { builders[$0]?.connection }
    }

    /// Each connection's client key, in order of opening.
    static func clientKeys(_ source: any RecordSource) throws -> [(conn: ConnectionID, key: String)] {
        var source = source
        var addresses: [ConnectionID: String] = [:]
        var keyed: Set<ConnectionID> = []
        var result: [(conn: ConnectionID, key: String)] = []
        var index: [ConnectionID: Int] = [:]
        while let record = try source.next() {
            switch record {
            case .open(let open):
                guard addresses[open.conn] == nil else { continue }
                addresses[open.conn] = open.client
                index[open.conn] = result.count
                result.append((open.conn, ReplayClientKey.of(clientAddress: open.client, request: nil)))
            case .upgrade(let upgrade) where upgrade.from == .client:
                guard let address = addresses[upgrade.conn], let i = index[upgrade.conn], !keyed.contains(upgrade.conn) else { continue }
                keyed.insert(upgrade.conn)
                result[i].key = ReplayClientKey.of(clientAddress: address, request: upgrade)
            default:
                continue
            }
        }
        return result
    }

    /// The connection ids a selection picks, or an error saying what the capture holds.
    static func select(keys: [(conn: ConnectionID, key: String)], selection: ReplaySelection) throws(ReplayInputError) -> Set<ConnectionID> {
        guard let first = keys.first else {
            throw ReplayInputError("the capture holds no connections (no open records): nothing to replay")
        }
        switch selection {
        case .firstClient:
            return Set(keys.filter { $0.key == first.key }.map(\.conn))
        case .connection(let id):
            guard keys.contains(where: { $0.conn == id }) else {
                throw ReplayInputError("no connection \(id) in the capture (it holds connections \(describe(keys.map(\.conn))))")
            }
            return [id]
        case .client(let wanted):
            var matching = keys.filter { $0.key == wanted }
            if matching.isEmpty { matching = keys.filter { $0.key.contains(wanted) } }
            let distinct = Array(Set(matching.map(\.key))).sorted()
            guard !distinct.isEmpty else {
                let known = Array(Set(keys.map(\.key))).sorted().prefix(10).map { "\"\($0)\"" }.joined(separator: ", ")
                throw ReplayInputError("no client matches \"\(wanted)\" (clients in the capture: \(known))")
            }
            guard distinct.count == 1 else {
                throw ReplayInputError("\"\(wanted)\" matches \(distinct.count) clients: \(distinct.prefix(10).map { "\"\($0)\"" }.joined(separator: ", ")); give more of the key")
            }
            return Set(matching.map(\.conn))
        }
    }

    private static func describe(_ ids: [ConnectionID]) -> String {
        guard let low = ids.min(), let high = ids.max() else { return "none" }
        return low == high ? "\(low)" : "\(low)-\(high)"
    }
}
