import Capture
import JSON
import Vocabulary

/// `faultline frames --all` and `--payload`: the lines for records that are not frames
/// (opens, upgrades, ends, notes, fault actions) and a frame's payload, in the same two
/// renderings as `FrameLine`. Strings from the capture that could hold control characters
/// are written JSON-escaped, so a hostile capture cannot drive the terminal.
package enum RecordLine {
    /// `    1.000000  #1    open    10.0.0.1:40001 -> 127.0.0.1:80`
    package static func text(_ record: CaptureRecord) -> String? {
        let t: Micros, conn: ConnectionID?, kind: String, detail: String
        switch record {
        case .header, .frame: return nil
        case .open(let r):
            (t, conn, kind) = (r.t, r.conn, "open")
            detail = "\(safe(r.client)) -> \(safe(r.server))" + (r.upstream.map { " upstream \(safe($0))" } ?? "")
        case .upgrade(let r):
            (t, conn, kind) = (r.t, r.conn, "upgrade")
            if r.from == .client {
                detail = "client->server \(safe(r.method ?? "?")) \(safe(r.target ?? "?"))"
            } else {
                detail = "server->client \(r.status.map(String.init) ?? "?")" + (r.reason.map { " \(safe($0))" } ?? "")
            }
        case .end(let r):
            (t, conn, kind) = (r.t, r.conn, "end")
            detail = "\(r.kind.rawValue.uppercased()) from \(r.side.rawValue)" + (r.detail.map { " (\(safe($0)))" } ?? "")
        case .fault(let r):
            (t, conn, kind) = (r.t, r.conn, "fault")
            detail = "\(safe(r.rule)): \(safe(r.detail))"
        case .note(let r):
            (t, conn, kind) = (r.t, r.conn, "note")
            detail = "\(r.level.rawValue): \(safe(r.message))"
        case .tunnel(let r):
            (t, conn, kind) = (r.t, r.conn, "tunnel")
            var text = "\(r.event.rawValue) \(safe(r.target))"
            if let client = r.client { text += " from \(safe(client))" }
            if let up = r.bytesUp, let down = r.bytesDown { text += " (\(up) bytes up, \(down) down)" }
            if let d = r.detail { text += " (\(safe(d)))" }
            detail = text
        case .http(let r):
            (t, conn, kind) = (r.t, r.conn, "http")
            detail = "\(safe(r.method)) \(safe(r.url)) -> " + (r.status.map(String.init) ?? "no response")
                + (r.error.map { " (\(safe($0)))" } ?? "")
        }
        let time = FrameLine.seconds(t)
        let connText = conn.map { "#\($0)" } ?? "-"
        return String(repeating: " ", count: max(0, 12 - time.count)) + time + "  " + connText
            + String(repeating: " ", count: max(0, 5 - connText.count)) + " " + kind
            + String(repeating: " ", count: max(0, 8 - kind.count)) + detail + "\n"
    }

    /// `{"record":"open","conn":1,"t":1.000000,...}`: lines without `record` are frames.
    package static func json(_ record: CaptureRecord) -> String? {
        var o = JSONObject()
        func time(_ t: Micros) -> JSONValue { .double(Double(t) / 1_000_000) }
        switch record {
        case .header, .frame: return nil
        case .open(let r):
            o["record"] = "open"; o["conn"] = .int(Int64(r.conn)); o["t"] = time(r.t)
            o["client"] = .string(r.client); o["server"] = .string(r.server)
            if let upstream = r.upstream { o["upstream"] = .string(upstream) }
        case .upgrade(let r):
            o["record"] = "upgrade"; o["conn"] = .int(Int64(r.conn)); o["t"] = time(r.t); o["from"] = .string(r.from.rawValue)
            if let method = r.method { o["method"] = .string(method) }
            if let target = r.target { o["target"] = .string(target) }
            if let status = r.status { o["status"] = .int(Int64(status)) }
        case .end(let r):
            o["record"] = "end"; o["conn"] = .int(Int64(r.conn)); o["t"] = time(r.t)
            o["side"] = .string(r.side.rawValue); o["kind"] = .string(r.kind.rawValue)
            if let detail = r.detail { o["detail"] = .string(detail) }
        case .fault(let r):
            o["record"] = "fault"; o["conn"] = r.conn.map { .int(Int64($0)) } ?? .null; o["t"] = time(r.t)
            o["rule"] = .string(r.rule); o["kind"] = .string(r.kind); o["detail"] = .string(r.detail)
        case .note(let r):
            o["record"] = "note"; o["conn"] = r.conn.map { .int(Int64($0)) } ?? .null; o["t"] = time(r.t)
            o["level"] = .string(r.level.rawValue); o["message"] = .string(r.message)
        case .tunnel(let r):
            o["record"] = "tunnel"; o["conn"] = .int(Int64(r.conn)); o["t"] = time(r.t)
            o["event"] = .string(r.event.rawValue); o["target"] = .string(r.target)
            if let client = r.client { o["client"] = .string(client) }
            if let up = r.bytesUp { o["bytes_up"] = .int(Int64(up)) }
            if let down = r.bytesDown { o["bytes_down"] = .int(Int64(down)) }
            if let detail = r.detail { o["detail"] = .string(detail) }
        case .http(let r):
            o["record"] = "http"; o["conn"] = .int(Int64(r.conn)); o["t"] = time(r.t)
            o["method"] = .string(r.method); o["url"] = .string(r.url)
            o["status"] = r.status.map { .int(Int64($0)) } ?? .null
            if let error = r.error { o["error"] = .string(error) }
        }
        var out: [UInt8] = []
        JSONWriter.write(.object(o), into: &out)
        out.append(0x0A)
        return String(decoding: out, as: UTF8.self)
    }

    /// A frame's payload for `--payload`: UTF-8 text as is, anything else as base64, cut to
    /// `maxChars` characters. Returns the text, its encoding and whether it was cut.
    package static func payload(_ frame: FrameRecord, maxChars: Int) -> (text: String, encoding: String, truncated: Bool) {
        let isText = frame.opcode == .text || (frame.opcode == .continuation && !frame.payload.isEmpty)
        if isText, let text = String(validating: frame.payload, as: UTF8.self) {
            let cut = text.count > maxChars
            return (cut ? String(text.prefix(maxChars)) : text, "text", cut || frame.payload.count < frame.length)
        }
        let encoded = Base64.encode(frame.payload)
        let cut = encoded.count > maxChars
        return (cut ? String(encoded.prefix(maxChars)) : encoded, "base64", cut || frame.payload.count < frame.length)
    }

    /// The payload as a JSON string literal (control characters escaped), with a mark when cut.
    package static func payloadText(_ frame: FrameRecord, maxChars: Int) -> String {
        let (text, encoding, truncated) = payload(frame, maxChars: maxChars)
        var out: [UInt8] = []
        JSONWriter.writeString(text, into: &out)
        return "  " + (encoding == "base64" ? "base64 " : "") + String(decoding: out, as: UTF8.self)
            + (truncated ? " (cut; \(frame.length) bytes)" : "") + "\n"
    }

    /// `s` as is, or JSON-quoted (every `DisplayUnsafe` character escaped) when it holds one.
    package static func safe(_ s: String) -> String {
        guard s.unicodeScalars.contains(where: DisplayUnsafe.contains) else { return s }
        var out: [UInt8] = []
        JSONWriter.writeString(s, into: &out)
        return String(decoding: out, as: UTF8.self)
    }
}
