import Capture
import Faults
import JSON
import Vocabulary

/// The control API's view of a running proxy (called on the loop thread).
extension ProxyServer: ControlTarget {
    func connectionSummaries() -> [JSONValue] {
        allPairs.map { $0.summary.json(openedAtSeconds: Double($0.summary.openedAt) / 1_000_000) }
    }

    @discardableResult
    func faultsChanged(connection: ConnectionID?) -> Bool {
        guard let connection else {
            for pair in allPairs { pair.faultsChanged() }
            return true
        }
        guard let pair = pair(connection) else { return false }
        pair.faultsChanged()
        return true
    }

    func watch(_ sink: @escaping (JSONValue) -> Void) -> Int? { watchHub.add(sink) }
    func unwatch(_ id: Int) { watchHub.remove(id) }

    func metrics() -> ProxyMetrics {
        var metrics = counters
        metrics.connectionsOpen = openConnections
        return metrics
    }
}
