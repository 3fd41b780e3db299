import Capture
import Vocabulary

/// The clients of an input as the analyzer groups them (the ids and keys `analyze`
/// reports), without building any timeline: its `ClientRouter` alone sees every record,
/// and each connection is handed out once, when its client is known. What `frames
/// --client` and replay's client selection need; a whole analysis would cost them the
/// timelines of every client.
public struct ClientGrouping: Sendable {
    private var router: ClientRouter
    private var steps: [RoutedStep] = []
    /// Each client's info, by its ordinal (order of first appearance).
    public private(set) var clients: [ClientInfo] = []

    /// Grouping does not depend on the spec: the built-in bird spec serves (it is part of
    /// the binary, so its failing to load is a broken build, thrown).
    public init(clientKey: ClientKeyMode = .standard) throws {
        router = ClientRouter(options: AnalyzerOptions(spec: try SpecLoader.load("bird"), clientKey: clientKey))
    }

    /// Routes one record; `grouped` gets each connection it put under a client.
    public mutating func observe(_ record: CaptureRecord, grouped: (ConnectionID, ClientInfo) -> Void) {
        steps.removeAll(keepingCapacity: true)
        router.route(record, into: &steps)
        for step in steps { take(step, grouped) }
    }

    /// The input ended: connections that never sent their upgrade request become clients.
    public mutating func finish(grouped: (ConnectionID, ClientInfo) -> Void) {
        while let step = router.nextFinishStep(at: nil) { take(step, grouped) }
    }

    private mutating func take(_ step: RoutedStep, _ grouped: (ConnectionID, ClientInfo) -> Void) {
        switch step {
        case .newClient(let ordinal, let info):
            // Ordinals come in order (0, 1, ...); the loop only guards the index.
            while clients.count <= ordinal { clients.append(info) }
            clients[ordinal] = info
        case .lateClient(let ordinal, let info, let open, _):
            while clients.count <= ordinal { clients.append(info) }
            clients[ordinal] = info
            grouped(open.conn, info)
        case .open(let ordinal, let open) where ordinal < clients.count:
            grouped(open.conn, clients[ordinal])
        default:
            break
        }
    }
}
