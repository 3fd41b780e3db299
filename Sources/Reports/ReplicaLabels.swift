import Vocabulary

/// Connections named with their replica, for reports of a fleet (`analyze --merge`).
extension AnalysisReport {
    /// Fills `replicas` for the connections the report shows (bounded like them).
    public mutating func labelReplicas(_ replica: (ConnectionID) -> String?) {
        for client in clients {
            for id in client.connectionIDs + client.connections.map(\.conn) where replicas[id] == nil {
                if let name = replica(id) { replicas[id] = name }
            }
        }
    }

    /// "3", or "3@replica-b" when the connection's replica is known.
    public func connectionLabel(_ id: ConnectionID) -> String {
        replicas[id].map { "\(id)@\($0)" } ?? String(id)
    }
}
