import Capture
import JSON
import Lifecycle
import Vocabulary

/// What the control API lists about one open connection, kept up to date from the records
/// the session emits (so the shell needs no knowledge of the session's insides).
package struct ConnectionSummary {
    package let id: ConnectionID
    package let client: String
    package let upstream: String
    package let openedAt: Micros
    /// "upgrading", "open", "refused", "closing", "ended".
    package var state = "upgrading"
    package var framesFromClient = 0
    package var framesFromServer = 0
    package var bytesFromClient = 0
    package var bytesFromServer = 0
    package var faultsFired = 0
    /// Peers whose own TCP end was recorded (on their leg; ends the proxy sent them are not theirs).
    package var ended: Set<Side> = []
    /// From the client's upgrade request, to tell connections apart: its User-Agent, its
    /// request target (path and query), and the key `faultline analyze` groups it by
    /// (source IP + User-Agent + path without volatile query parameters). Nil until the
    /// request is read.
    package var userAgent: String?
    package var path: String?
    package var clientKey: String?

    package init(id: ConnectionID, client: String, upstream: String, openedAt: Micros) {
        self.id = id
        self.client = client
        self.upstream = upstream
        self.openedAt = openedAt
    }

    package mutating func observe(_ record: CaptureRecord) {
        switch record {
        case .upgrade(let upgrade) where upgrade.from == .server:
            state = upgrade.status == 101 ? "open" : "refused"
        case .upgrade(let request) where request.from == .client:
            userAgent = request.header("User-Agent")
            path = request.target
            clientKey = ClientKeyMode.standard.key(open: OpenRecord(conn: id, t: openedAt, client: client, server: ""),
                                                   request: request)
        case .frame(let frame):
            switch frame.action {
            case .forwarded, .delayed:
                if frame.from == .client {
                    framesFromClient += 1
                    bytesFromClient += frame.length
                } else {
                    framesFromServer += 1
                    bytesFromServer += frame.length
                }
            case .dropped, .injected, .observed:
                break
            }
            if frame.opcode == .close, state == "open" { state = "closing" }
        case .fault:
            faultsFired += 1
        case .end(let end):
            if !end.byProxy { ended.insert(end.side) }
            state = "ended"
        default:
            break
        }
    }

    package func json(openedAtSeconds: Double) -> JSONValue {
        .object([
            "id": .int(Int64(id)),
            "client": .string(client),
            "user_agent": userAgent.map { .string($0) } ?? .null,
            "path": path.map { .string($0) } ?? .null,
            "client_key": clientKey.map { .string($0) } ?? .null,
            "upstream": .string(upstream),
            "state": .string(state),
            "opened_at": .double(openedAtSeconds),
            "frames_client_to_server": .int(Int64(framesFromClient)),
            "frames_server_to_client": .int(Int64(framesFromServer)),
            "bytes_client_to_server": .int(Int64(bytesFromClient)),
            "bytes_server_to_client": .int(Int64(bytesFromServer)),
            "faults_fired": .int(Int64(faultsFired)),
        ])
    }
}
