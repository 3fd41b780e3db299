import Capture
import Lifecycle
import Reports
import Vocabulary
import WebSocket

/// Everything the page shows, kept up to date from the proxy's records and the live
/// analyzer's events (or a capture's, offline): one row per connection, one lane per
/// client, the latest frames. Pure and bounded: at most `maxRows` connections (the oldest
/// ended ones go first, counted in `evictedRows`), each client's lane keeps what a report
/// keeps (`ReportLimits.standard`), and frames live in one ring of `frameCapacity` (each
/// payload cut to `payloadPrefix` bytes). `seq` counts changes: pages compare it to see
/// whether they are behind.
package final class UIModel {
    package static let maxRows = 20_000
    package static let maxClients = 20_000
    package static let frameCapacity = 32_768
    package static let payloadPrefix = 2048

    package struct Row: Sendable {
        package var conn: ConnectionID
        package var client: String?
        package var path = ""
        package var userAgent = ""
        package var openedAt: Micros
        package var endedAt: Micros?
        package var frames = 0
        package var bytes = 0
        /// How it ended: "close 4009 from server", "RST from client".
        package var end: String?
    }

    package struct Client: Sendable {
        package var info: ClientInfo
        package var builder = ReportBuilder()
        package var state: String?
        package var findings = 0
        /// `seq` when this client last changed (the page reloads its lane then).
        package var changed = 0
    }

    /// One frame as the frames view shows it.
    package struct Frame: Sendable {
        package var conn: ConnectionID
        /// 1 for the connection's first frame.
        package var number: Int
        package var t: Micros
        package var from: Side
        package var opcode: Opcode
        package var length: Int
        package var payload: [UInt8]
        package var action: String
        package var event: String?
        package var closeCode: UInt16?
        package var closeReason: String?
        package var fault: String?
    }

    package let spec: LifecycleSpec
    package private(set) var seq = 0
    package private(set) var now: Micros = 0
    package private(set) var rows: [ConnectionID: Row] = [:]
    /// Connection ids oldest first (stale ids of evicted rows are skipped and compacted).
    private var order: [ConnectionID] = []
    package private(set) var clients: [String: Client] = [:]
    private var clientOrder: [String] = []
    package private(set) var evictedRows = 0
    package private(set) var evictedClients = 0
    /// The frame ring: `frames[i % capacity]` for the last `capacity` frames.
    private var ring: [Frame] = []
    private var ringNext = 0
    /// Told after every change (the server schedules page updates).
    package var onChange: (() -> Void)?

    package init(spec: LifecycleSpec) {
        self.spec = spec
    }

    // MARK: Feeding

    package func observe(_ record: CaptureRecord) {
        if let t = record.time { now = max(now, t) }
        switch record {
        case .open(let open):
            guard rows[open.conn] == nil else { break }
            rows[open.conn] = Row(conn: open.conn, openedAt: open.t)
            order.append(open.conn)
            evictRowsIfFull()
        case .upgrade(let upgrade) where upgrade.from == .client:
            rows[upgrade.conn]?.path = upgrade.target ?? ""
            rows[upgrade.conn]?.userAgent = upgrade.headers.first(named: "User-Agent") ?? ""
        case .frame(let frame):
            guard var row = rows[frame.conn] else { break }
            row.frames += 1
            row.bytes = row.bytes.addingReportingOverflow(frame.length).overflow ? Int.max : row.bytes + frame.length
            if frame.opcode == .close, row.end == nil {
                row.end = "close \(frame.closeCode.map(String.init) ?? "-") from \(frame.from.rawValue)"
            }
            rows[frame.conn] = row
            keep(frame, number: row.frames)
        case .end(let end):
            guard var row = rows[end.conn] else { break }
            if row.end == nil, !end.byProxy { row.end = "\(end.kind.rawValue.uppercased()) from \(end.side.rawValue)" }
            if end.kind == .captureEnd || row.endedAt == nil { row.endedAt = end.t }
            rows[end.conn] = row
        default:
            break
        }
        changed()
    }

    package func observe(_ event: AnalysisEvent) {
        switch event {
        case .client(let info):
            guard clients[info.id] == nil else { break }
            var client = Client(info: info)
            client.builder.add(event)
            clients[info.id] = client
            clientOrder.append(info.id)
            evictClientsIfFull()
        case .connection(let conn, let client):
            rows[conn]?.client = client
            add(event, to: client)
        case .transition(let t):
            clients[t.client]?.state = t.to
            add(event, to: t.client)
        case .finding(let f):
            clients[f.client]?.findings += 1
            add(event, to: f.client)
        case .connectionEnded(let span): add(event, to: span.client)
        case .fault(let mark): add(event, to: mark.client)
        case .undetermined(let u): add(event, to: u.client)
        }
        changed()
    }

    /// The analyzer's clock moved without a record (a quiet session's timers).
    package func advance(to t: Micros) {
        guard t > now else { return }
        now = t
        changed()
    }

    private func add(_ event: AnalysisEvent, to client: String) {
        guard clients[client] != nil else { return }
        clients[client]!.builder.add(event)
        clients[client]!.changed = seq + 1
    }

    private func changed() {
        seq += 1
        onChange?()
    }

    private func keep(_ record: FrameRecord, number: Int) {
        let frame = Frame(conn: record.conn, number: number, t: record.t, from: record.from, opcode: record.opcode,
                          length: record.length, payload: Array(record.payload.prefix(Self.payloadPrefix)),
                          action: record.action.name, event: FrameLine.eventName(record), closeCode: record.closeCode,
                          closeReason: record.closeReason, fault: record.fault)
        if ring.count < Self.frameCapacity {
            ring.append(frame)
        } else {
            ring[ringNext] = frame
        }
        ringNext = (ringNext + 1) % Self.frameCapacity
    }

    private func evictRowsIfFull() {
        guard rows.count > Self.maxRows else { return }
        if let index = order.firstIndex(where: { rows[$0]?.endedAt != nil }) ?? order.indices.first {
            rows[order[index]] = nil
            order.remove(at: index)
            evictedRows += 1
        }
    }

    private func evictClientsIfFull() {
        guard clients.count > Self.maxClients, !clientOrder.isEmpty else { return }
        clients[clientOrder.removeFirst()] = nil
        evictedClients += 1
    }

    // MARK: Reading

    /// Rows matching `filter`, oldest first: how many, and the `count` from `offset`.
    /// The number of the oldest kept frame of `conn` (older ones left the ring), if any.
    package func oldestFrame(of conn: ConnectionID) -> Int? {
        let start = ring.count < Self.frameCapacity ? 0 : ringNext
        for i in 0..<ring.count where ring[(start + i) % ring.count].conn == conn { return ring[(start + i) % ring.count].number }
        return nil
    }

    package func rows(matching filter: UIFilter, offset: Int, count: Int) -> (total: Int, rows: [Row]) {
        var total = 0
        var window: [Row] = []
        let end = offset.addingReportingOverflow(count).overflow ? Int.max : offset + count
        for conn in order {
            guard let row = rows[conn], filter.matches(row, client: row.client.flatMap { clients[$0] }) else { continue }
            if total >= offset, total < end { window.append(row) }
            total += 1
        }
        return (total, window)
    }

    /// The kept frames of `conn` numbered after `after` that match `filter`, oldest first,
    /// at most `limit`.
    package func frames(of conn: ConnectionID, after: Int, matching filter: UIFrameFilter, limit: Int) -> [Frame] {
        var out: [Frame] = []
        let start = ring.count < Self.frameCapacity ? 0 : ringNext
        for i in 0..<ring.count {
            let frame = ring[(start + i) % ring.count]
            guard frame.conn == conn, frame.number > after, filter.matches(frame) else { continue }
            out.append(frame)
            if out.count >= limit { break }
        }
        return out
    }

    /// The client's history as a report's client, for its lane and findings.
    package func report(client id: String) -> AnalysisReport.Client? {
        guard let client = clients[id] else { return nil }
        return client.builder.build(spec: spec, inputs: [], grouping: "", prefix: nil).clients.first
    }

    /// The lane of client `id` as an SVG image on the time axis from 0 to now.
    package func laneImage(client id: String) -> String? {
        report(client: id).map { HTMLReport.laneImage($0, spec: spec, end: now) }
    }
}
