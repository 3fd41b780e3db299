import Capture
import Lifecycle
import Vocabulary

/// `faultline ui CAPTURE...`: recorded captures and pcaps fed to the same model as a live
/// proxy's records, through the same analyzer. Several inputs each keep their own
/// connection numbers and client ids in their files, so on the page the connections of
/// input i (from 0) are numbered from i × `connectionsPerInput` + 1 and its clients are
/// prefixed "i+1/" (as `analyze` names them).
package struct UICaptures {
    package static let connectionsPerInput = 1_000_000
    package let model: UIModel
    private var analyzer: LiveAnalyzer
    private let offset: Int
    private var last: Micros = 0

    /// The loader of input number `index` (from 0) of `count`.
    package init(model: UIModel, index: Int, count: Int) {
        self.model = model
        offset = index * Self.connectionsPerInput
        analyzer = LiveAnalyzer(options: AnalyzerOptions(spec: model.spec, clientIDPrefix: count > 1 ? "\(index + 1)/" : ""))
    }

    /// One record of the input. A connection number at or beyond `connectionsPerInput`
    /// would run into the next input's: false (the record is not shown).
    @discardableResult
    package mutating func feed(_ record: CaptureRecord) -> Bool {
        if let conn = record.connection, conn < 0 || conn >= Self.connectionsPerInput { return false }
        if let t = record.time { last = max(last, t) }
        let events = analyzer.feed(record)
        model.observe(Self.shifted(record, by: offset))
        for event in events { model.observe(Self.shifted(event, by: offset)) }
        return true
    }

    /// The end of the input: the analyzer's last checks.
    package mutating func finish() {
        for event in analyzer.finish(at: last) { model.observe(Self.shifted(event, by: offset)) }
        model.advance(to: last)
    }

    static func shifted(_ record: CaptureRecord, by offset: Int) -> CaptureRecord {
        guard offset != 0 else { return record }
        switch record {
        case .header: return record
        case .open(var r): r.conn += offset; return .open(r)
        case .upgrade(var r): r.conn += offset; return .upgrade(r)
        case .frame(var r): r.conn += offset; return .frame(r)
        case .end(var r): r.conn += offset; return .end(r)
        case .fault(var r): r.conn = r.conn.map { $0 + offset }; return .fault(r)
        case .note(var r): r.conn = r.conn.map { $0 + offset }; return .note(r)
        case .tunnel(var r): r.conn += offset; return .tunnel(r)
        case .http(var r): r.conn += offset; return .http(r)
        }
    }

    static func shifted(_ event: AnalysisEvent, by offset: Int) -> AnalysisEvent {
        guard offset != 0 else { return event }
        func shift(_ e: Evidence) -> Evidence { var e = e; e.conn += offset; return e }
        switch event {
        case .client: return event
        case .connection(let conn, let client): return .connection(conn + offset, client: client)
        case .transition(var t):
            t.conn = t.conn.map { $0 + offset }
            t.evidence = t.evidence.map(shift)
            return .transition(t)
        case .finding(var f):
            f.conn += offset
            f.evidence = f.evidence.map(shift)
            return .finding(f)
        case .connectionEnded(var span): span.conn += offset; return .connectionEnded(span)
        case .fault(var mark): mark.conn = mark.conn.map { $0 + offset }; return .fault(mark)
        case .undetermined(var u): u.conn += offset; return .undetermined(u)
        }
    }
}
