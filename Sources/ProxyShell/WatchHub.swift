import Capture
import JSON
import Lifecycle
import Vocabulary

/// The proxy's event stream for `GET /events` and `faultline ctl watch`: the records that
/// matter to someone watching (connections opened, TCP ends read from a peer, faults fired),
/// the end of each connection pair (both sockets closed), and, in live mode, findings, each
/// as one JSON object, sent to every watcher. Bounded: at most
/// `maxWatchers` at once (more get no stream). Loop thread only.
package final class WatchHub {
    package static let maxWatchers = 16
    private var sinks: [Int: (JSONValue) -> Void] = [:]
    private var nextID = 1

    package var isEmpty: Bool { sinks.isEmpty }

    package func add(_ sink: @escaping (JSONValue) -> Void) -> Int? {
        guard sinks.count < Self.maxWatchers else { return nil }
        let id = nextID
        nextID += 1
        sinks[id] = sink
        return id
    }

    package func remove(_ id: Int) { sinks[id] = nil }

    package func publish(_ record: CaptureRecord) {
        guard !sinks.isEmpty, let event = Self.event(for: record) else { return }
        send(event)
    }

    /// Both sockets of connection `conn` are closed: nothing more will happen on it.
    package func connectionEnded(_ conn: ConnectionID, t: Micros) {
        guard !sinks.isEmpty else { return }
        send(["type": "connection-ended", "t": .double(Self.seconds(t)), "conn": .int(Int64(conn))])
    }

    package func publish(_ finding: Finding) {
        guard !sinks.isEmpty else { return }
        var object: JSONObject = ["type": "finding", "t": .double(Self.seconds(finding.t)), "conn": .int(Int64(finding.conn)),
                                  "rule": .string(finding.rule), "severity": .string("\(finding.severity)"),
                                  "client": .string(finding.client), "message": .string(finding.message)]
        if let fault = finding.causedByFault { object["caused_by_fault"] = .string(fault) }
        send(.object(object))
    }

    private func send(_ event: JSONValue) {
        for sink in sinks.values { sink(event) }
    }

    package static func seconds(_ t: Micros) -> Double { Double(t) / 1_000_000 }

    /// The watcher's view of a record, or nil for records not worth a line (frames, notes).
    package static func event(for record: CaptureRecord) -> JSONValue? {
        switch record {
        case .open(let open):
            var object: JSONObject = ["type": "connection-opened", "t": .double(seconds(open.t)), "conn": .int(Int64(open.conn)),
                                      "client": .string(open.client)]
            if let upstream = open.upstream { object["upstream"] = .string(upstream) }
            return .object(object)
        case .end(let end):
            var object: JSONObject = ["type": "tcp-end", "t": .double(seconds(end.t)), "conn": .int(Int64(end.conn)),
                                      "side": .string(end.side.rawValue), "how": .string(end.kind.rawValue)]
            if let detail = end.detail { object["detail"] = .string(detail) }
            return .object(object)
        case .fault(let fault):
            var object: JSONObject = ["type": "fault", "t": .double(seconds(fault.t)), "rule": .string(fault.rule),
                                      "kind": .string(fault.kind), "detail": .string(fault.detail)]
            if let conn = fault.conn { object["conn"] = .int(Int64(conn)) }
            if let target = fault.target { object["target"] = .string(target.rawValue) }
            return .object(object)
        default:
            return nil
        }
    }
}
