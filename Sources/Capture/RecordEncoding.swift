import JSON
import WebSocket

/// CaptureRecord <-> one JSON Lines line. The keys are the file format's contract and are
/// documented, one table per record type, in docs/capture-format.md.
///
/// Encoding writes bytes directly (it runs on the proxy's hot path and in the analyzer's
/// 1 GB benchmark); decoding parses the line with `JSONParser` and reads the keys it knows,
/// ignoring any others so that a newer writer's additions do not break an older reader.
public enum RecordCoding {
    /// The `type` values of records after the header, in the order error messages list them.
    public static let recordTypes = ["open", "upgrade", "frame", "close", "end", "fault", "note", "tunnel", "http"]

    /// The record as one line, newline included.
    public static func encode(_ record: CaptureRecord) -> [UInt8] {
        var bytes: [UInt8] = []
        bytes.reserveCapacity(160)
        encode(record, into: &bytes)
        return bytes
    }

    /// Appends the record's line (newline included) to `out`.
    public static func encode(_ record: CaptureRecord, into out: inout [UInt8]) {
        var line = LineBuilder(taking: &out)
        switch record {
        case .header(let h):
            line.field("type", "header")
            line.field("format", CaptureHeader.formatName)
            line.field("version", h.version)
            line.field("tool", h.tool)
            line.field("started_at_us", h.startedAt)
            line.field("source", h.source)
            line.field("settings", JSONValue.object(h.settings))
            if let recording = h.recording { line.field("recording", recording) }
            if let part = h.part { line.field("part", part) }
            if let spec = h.spec { line.field("spec", JSONValue.object(spec.json)) }
        case .open(let r):
            line.field("type", "open")
            line.field("conn", r.conn)
            line.field("t", r.t)
            line.field("client", r.client)
            line.field("server", r.server)
            if let upstream = r.upstream { line.field("upstream", upstream) }
        case .upgrade(let r):
            line.field("type", "upgrade")
            line.field("conn", r.conn)
            line.field("t", r.t)
            line.field("from", r.from.rawValue)
            if let method = r.method { line.field("method", method) }
            if let target = r.target { line.field("target", target) }
            if let status = r.status { line.field("status", status) }
            if let reason = r.reason { line.field("reason", reason) }
            line.key("headers")
            line.bytes.append(UInt8(ascii: "["))
            for (i, header) in r.headers.enumerated() {
                if i > 0 { line.bytes.append(UInt8(ascii: ",")) }
                line.bytes.append(UInt8(ascii: "["))
                JSONWriter.writeString(header.name, into: &line.bytes)
                line.bytes.append(UInt8(ascii: ","))
                JSONWriter.writeString(header.value, into: &line.bytes)
                line.bytes.append(UInt8(ascii: "]"))
            }
            line.bytes.append(UInt8(ascii: "]"))
        case .frame(let r):
            encodeFrame(r, into: &line)
        case .end(let r):
            line.field("type", "end")
            line.field("conn", r.conn)
            line.field("t", r.t)
            line.field("side", r.side.rawValue)
            line.field("kind", r.kind.rawValue)
            if let leg = r.leg { line.field("leg", leg.rawValue) }
            if let detail = r.detail { line.field("detail", detail) }
        case .fault(let r):
            line.field("type", "fault")
            if let conn = r.conn { line.field("conn", conn) }
            line.field("t", r.t)
            line.field("rule", r.rule)
            line.field("kind", r.kind)
            if let target = r.target { line.field("target", target.rawValue) }
            line.field("detail", r.detail)
        case .note(let r):
            line.field("type", "note")
            if let conn = r.conn { line.field("conn", conn) }
            line.field("t", r.t)
            line.field("level", r.level.rawValue)
            line.field("message", r.message)
        case .tunnel(let r):
            encodeTunnel(r, into: &line)
        case .http(let r):
            encodeHTTP(r, into: &line)
        }
        out = line.finish()
    }

    /// Frames are `type:"frame"` with the payload as `text` (valid UTF-8) or `b64`; close
    /// frames are `type:"close"` with `code` and `reason` (or `b64` when the body is not a
    /// well-formed code plus UTF-8 reason, so every byte survives).
    private static func encodeFrame(_ r: FrameRecord, into line: inout LineBuilder) {
        let isClose = r.opcode == .close
        line.field("type", isClose ? "close" : "frame")
        line.field("conn", r.conn)
        line.field("t", r.t)
        line.field("from", r.from.rawValue)
        if !isClose { line.field("op", Int(r.opcode.rawValue)) }
        line.field("fin", r.fin)
        line.field("rsv1", r.rsv1)
        if r.rsv2 { line.field("rsv2", true) }
        if r.rsv3 { line.field("rsv3", true) }
        line.field("masked", r.masked)
        line.field("len", r.length)
        if r.compressed { line.field("compressed", true) }
        line.field("action", r.action.name)
        if case .delayed(let delay) = r.action { line.field("delay_us", delay) }
        if let error = r.protocolError { line.field("error", error) }
        if let fault = r.fault { line.field("fault", fault) }
        if let digest = r.sha256 { line.field("sha256", digest) }
        if isClose {
            if r.payload.isEmpty { return }
            if r.payload.count >= 2,
               r.payload.withUnsafeBufferPointer({ UTF8Check.isValid(UnsafeBufferPointer(rebasing: $0[2...])) }) {
                line.field("code", Int(r.payload[0]) << 8 | Int(r.payload[1]))
                line.field("reason", utf8: Array(r.payload[2...]))
            } else {
                line.field("b64", base64: r.payload)
            }
        } else if UTF8Check.isValid(r.payload) {
            line.field("text", utf8: r.payload)
        } else {
            line.field("b64", base64: r.payload)
        }
    }
}
