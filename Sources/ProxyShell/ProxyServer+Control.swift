import Capture
import ControlAPI
import Faults
import JSON
import ProxyCore
import Vocabulary

/// The control API's view of a running proxy (called on the loop thread): the server is
/// the `ControlBackend` itself, so the API and the proxy share one contract.
extension ProxyServer: ControlBackend {
    package func connectionSummaries() -> [JSONValue] {
        allPairs.map { $0.summary.json(openedAtSeconds: Double($0.summary.openedAt) / 1_000_000) }
    }

    @discardableResult
    package func faultsChanged(connection: ConnectionID?) -> Bool {
        guard let connection else {
            for pair in allPairs { pair.faultsChanged() }
            return true
        }
        guard let pair = pair(connection) else { return false }
        pair.faultsChanged()
        return true
    }

    package func watch(_ sink: @escaping (JSONValue) -> Void) -> Int? { watchHub.add(sink) }
    package func unwatch(_ id: Int) { watchHub.remove(id) }
    package var interceptDesk: InterceptDesk? { settings.interceptDesk }

    package func metrics() -> ControlMetrics {
        var metrics = counters
        metrics.connectionsOpen = openConnections
        metrics.replica = settings.replica
        return metrics
    }
}
