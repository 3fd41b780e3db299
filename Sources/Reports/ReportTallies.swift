import Lifecycle
import Vocabulary

/// Rows counted by key, in the order their keys were first seen, each with its distinct
/// clients in the order they were first seen: the summaries' "rule ×N client-1, client-2".
/// Rows and memberships are found by hashing: a capture of 200,000 clients with the same
/// finding (or a crafted one with as many distinct fault rules) is summarised in linear
/// time, where searching the lists took minutes.
struct ClientTally<Key: Hashable> {
    struct Row {
        var key: Key
        var count: Int
        var clients: [String]
    }

    private(set) var rows: [Row] = []
    private var rowOfKey: [Key: Int] = [:]
    private var listed: Set<Listed> = []

    private struct Listed: Hashable {
        var row: Int
        var client: String
    }

    /// One more under `key`, by `client` (listed once per row); true when it made a new row.
    @discardableResult
    mutating func add(_ key: Key, client: String) -> Bool {
        let row: Int
        let isNew: Bool
        if let existing = rowOfKey[key] {
            row = existing
            rows[row].count += 1
            isNew = false
        } else {
            row = rows.count
            rowOfKey[key] = row
            rows.append(Row(key: key, count: 1, clients: []))
            isNew = true
        }
        if listed.insert(Listed(row: row, client: client)).inserted { rows[row].clients.append(client) }
        return isNew
    }
}

/// The auth requests of each connection, found by connection number instead of by a scan
/// of every request for every client (clients × requests on a large capture).
struct AuthRequestIndex {
    private let links: [AuthRequestLink]
    private var byConn: [ConnectionID: [Int]] = [:]

    init(_ links: [AuthRequestLink]) {
        self.links = links
        for (i, link) in links.enumerated() { byConn[link.conn, default: []].append(i) }
    }

    /// The requests whose connection is one of `conns`, in the report's order.
    func links(of conns: [ConnectionID]) -> [AuthRequestLink] {
        guard !byConn.isEmpty else { return [] }
        var indices: Set<Int> = []
        for conn in conns { indices.formUnion(byConn[conn] ?? []) }
        return indices.sorted().map { links[$0] }
    }
}
