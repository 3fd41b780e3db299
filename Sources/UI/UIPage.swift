import JSON
import Lifecycle
import Reports
import Vocabulary

/// One open page: what it looks at and what it has been sent, and the update that brings
/// it up to date. Pure. Updates are coalesced: however many changes happened since the
/// last one, the next update is one message with the current rows of the page's window
/// and the frames it has not had yet, so a page costs the relay nothing per record. A page
/// whose socket is still full when an update is due is skipped (`skipped` counts those,
/// and the page shows it); its next update catches it up.
///
/// A page that reconnects says which frame it had (`hello`'s `frames_after`) and gets only
/// the later ones: it resumes where it left off.
package struct UIPage: Sendable {
    package static let maxRows = 200
    package static let maxFrames = 200

    package var filter = UIFilter("")
    package var offset = 0
    package var count = 50
    package var selected: ConnectionID?
    package var frameFilter = UIFrameFilter("")
    /// The last frame number of `selected` the page holds.
    package var framesAfter = 0
    /// The model's `seq` of the last update sent (-1: none yet).
    package var sentSeq = -1
    package var skipped = 0
    /// The client lane's version last sent.
    private var laneSent: (client: String, version: Int)?
    /// More frames are waiting than one update carries.
    private var framesPending = false

    package init() {}

    /// A message from the page that changes what it looks at; false for an unknown one.
    /// (Actions are `UIActions`' business.)
    package mutating func receive(_ message: JSONValue) -> Bool {
        switch message["type"]?.stringValue {
        case "hello":
            sentSeq = -1
            laneSent = nil
            if let conn = message["selected"]?.intValue, conn > 0, conn <= Int64(Int32.max) {
                selected = Int(conn)
                framesAfter = Self.clamp(message["frames_after"]?.intValue, 0...Int(Int32.max)) ?? 0
            }
            return receiveView(message)
        case "view":
            return receiveView(message)
        case "select":
            let conn = message["conn"]?.intValue
            selected = conn.flatMap { $0 > 0 && $0 <= Int64(Int32.max) ? Int($0) : nil }
            framesAfter = 0
            laneSent = nil
            if let text = message["frame_filter"]?.stringValue { frameFilter = UIFrameFilter(text) }
            sentSeq = -1
            return true
        default:
            return false
        }
    }

    private mutating func receiveView(_ message: JSONValue) -> Bool {
        if let text = message["filter"]?.stringValue { filter = UIFilter(text) }
        offset = Self.clamp(message["offset"]?.intValue, 0...Int(Int32.max)) ?? offset
        count = Self.clamp(message["count"]?.intValue, 1...Self.maxRows) ?? count
        sentSeq = -1
        return true
    }

    static func clamp(_ value: Int64?, _ range: ClosedRange<Int>) -> Int? {
        guard let value else { return nil }
        return Int(min(max(value, Int64(range.lowerBound)), Int64(range.upperBound)))
    }

    /// Whether the model changed since the last update (or more frames wait).
    package func isBehind(_ model: UIModel) -> Bool { sentSeq != model.seq || framesPending }

    /// The update that brings the page to the model's state; records what it sent.
    package mutating func update(_ model: UIModel) -> JSONValue {
        let (total, rows) = model.rows(matching: filter, offset: offset, count: count)
        var object: JSONObject = [
            "type": "update", "seq": .int(Int64(model.seq)), "now": .double(Self.seconds(model.now)),
            "skipped": .int(Int64(skipped)), "total": .int(Int64(total)), "offset": .int(Int64(offset)),
            "rows": .array(rows.map { Self.json($0, client: $0.client.flatMap { model.clients[$0] }, now: model.now) }),
        ]
        if model.evictedRows > 0 { object["evicted_rows"] = .int(Int64(model.evictedRows)) }
        if let selected, let row = model.rows[selected] {
            object["selected"] = detail(row, model: model)
        }
        sentSeq = model.seq
        return .object(object)
    }

    private mutating func detail(_ row: UIModel.Row, model: UIModel) -> JSONValue {
        let client = row.client.flatMap { model.clients[$0] }
        var object: JSONObject = ["row": Self.json(row, client: client, now: model.now)]
        if let client {
            object["key"] = .string(client.info.key)
            if laneSent?.client != client.info.id || laneSent?.version != client.changed {
                laneSent = (client.info.id, client.changed)
                object["lane"] = .int(Int64(client.changed))
                if let report = model.report(client: client.info.id) {
                    object["findings"] = .array(report.findings.map(Self.json))
                }
            }
        }
        let frames = model.frames(of: row.conn, after: framesAfter, matching: frameFilter, limit: Self.maxFrames + 1)
        framesPending = frames.count > Self.maxFrames
        let sent = frames.prefix(Self.maxFrames)
        if let last = sent.last { framesAfter = last.number }
        object["frames"] = .array(sent.map(Self.json))
        object["frames_after"] = .int(Int64(framesAfter))
        if let oldest = model.oldestFrame(of: row.conn), oldest > 1 { object["frames_lost"] = .int(Int64(oldest - 1)) }
        return .object(object)
    }

    static func seconds(_ t: Micros) -> Double { Double(t) / 1_000_000 }

    static func json(_ row: UIModel.Row, client: UIModel.Client?, now: Micros) -> JSONValue {
        var object: JSONObject = [
            "conn": .int(Int64(row.conn)), "path": .string(row.path), "ua": .string(row.userAgent),
            "opened": .double(seconds(row.openedAt)), "age": .double(seconds(max(0, (row.endedAt ?? now) - row.openedAt))),
            "frames": .int(Int64(row.frames)), "bytes": .int(Int64(row.bytes)),
            "open": .bool(row.endedAt == nil),
        ]
        if let id = row.client { object["client"] = .string(id) }
        if let client {
            object["key"] = .string(client.info.key)
            object["findings"] = .int(Int64(client.findings))
            if let state = client.state { object["state"] = .string(state) }
        }
        if let end = row.end { object["end"] = .string(end) }
        return .object(object)
    }

    static func json(_ frame: UIModel.Frame) -> JSONValue {
        var object: JSONObject = [
            "n": .int(Int64(frame.number)), "t": .double(seconds(frame.t)), "from": .string(frame.from.rawValue),
            "opcode": .int(Int64(frame.opcode.rawValue)), "len": .int(Int64(frame.length)), "action": .string(frame.action),
        ]
        if frame.opcode == .text, let text = String(validating: frame.payload, as: UTF8.self) {
            object["text"] = .string(text)
        } else {
            object["base64"] = .string(Base64.encode(frame.payload))
        }
        if frame.payload.count < frame.length { object["cut"] = .bool(true) }
        if let event = frame.event { object["event"] = .string(event) }
        if let code = frame.closeCode { object["close_code"] = .int(Int64(code)) }
        if let reason = frame.closeReason { object["close_reason"] = .string(reason) }
        if let fault = frame.fault { object["fault"] = .string(fault) }
        return .object(object)
    }

    static func json(_ finding: Finding) -> JSONValue {
        var object: JSONObject = [
            "rule": .string(finding.rule), "severity": .string(finding.severity.rawValue), "conn": .int(Int64(finding.conn)),
            "t": .double(seconds(finding.t)), "message": .string(finding.message),
            "evidence": .array(finding.evidence.map { e in
                ["conn": .int(Int64(e.conn)), "t": .double(seconds(e.t)), "summary": .string(e.summary)]
            }),
        ]
        if let entry = RuleGuide.entry(finding.rule) {
            object["explain"] = .string(entry.meaning)
            object["example"] = .string(entry.example)
        }
        if let note = finding.faultNote { object["fault_note"] = .string(note) }
        return .object(object)
    }
}
