import JSON
import Vocabulary
import WebSocket

/// Decodes every record after the header straight from its line's bytes into a
/// `CaptureRecord`, member by member with `JSONScanner`, without building a `JSONValue`
/// tree first. The tree-based `RecordCoding.decode` parsed every line into an ordered tree
/// and then read the record out of it: about a third of `faultline analyze`'s time on large
/// captures.
///
/// Invariant: `decode` returns exactly what `RecordCoding.decode` returns for the same
/// line, or nil, meaning "not sure". It covers every key of every record type the writer
/// writes (`RecordEncoding`), so it takes every line a writer makes; it gives up (nil) only
/// on what the writer never writes: a header (line 1, read once), a type this version does
/// not know, a repeated or escaped key, a number written as a fraction or exponent, or
/// anything the tree-based decoder refuses. The caller then runs the tree-based decoder,
/// which gives the record or the error message; messages therefore come from one place only.
enum DirectRecordDecoder {
    static func decode(_ line: UnsafeBufferPointer<UInt8>) -> CaptureRecord? {
        do throws(NotSure) {
            return try RecordMembers.read(line) { (m) throws(NotSure) -> CaptureRecord? in try record(m) }
        } catch {
            return nil
        }
    }

    private static func record(_ m: borrowing RecordMembers) throws(NotSure) -> CaptureRecord? {
        let type = try m.token(.type)
        let s = m.scanner
        if s.matches(type, "frame") { return .frame(try frame(m, isClose: false)) }
        if s.matches(type, "close") { return .frame(try frame(m, isClose: true)) }
        if s.matches(type, "open") { return .open(try open(m)) }
        if s.matches(type, "end") { return .end(try end(m)) }
        if s.matches(type, "upgrade") { return .upgrade(try upgrade(m)) }
        if s.matches(type, "fault") { return .fault(try fault(m)) }
        if s.matches(type, "note") { return .note(try note(m)) }
        if s.matches(type, "tunnel") { return .tunnel(try tunnel(m)) }
        if s.matches(type, "http") { return .http(try http(m)) }
        return nil
    }

    /// As `RecordCoding.decodeFrame`: every frame key is type-checked whether or not the
    /// record's kind uses it, and the payload comes from `b64`, else (a close) `code` and
    /// `reason`, else `text`.
    private static func frame(_ m: borrowing RecordMembers, isClose: Bool) throws(NotSure) -> FrameRecord {
        let conn = try m.int(.conn), t = try m.time(.t), from = try m.side(.from)
        let op = try m.optionalInt(.op), code = try m.optionalInt(.code), length = try m.optionalInt(.len)
        let delay = try m.optionalDuration(.delayUS)
        let fin = try m.bool(.fin, default: true), rsv1 = try m.bool(.rsv1, default: false)
        let rsv2 = try m.bool(.rsv2, default: false), rsv3 = try m.bool(.rsv3, default: false)
        let masked = try m.bool(.masked, default: false), compressed = try m.bool(.compressed, default: false)
        let text = try m.optionalToken(.text), b64 = try m.optionalToken(.b64), reason = try m.optionalToken(.reason)
        let actionName = try m.optionalToken(.action)
        let error = try m.optionalString(.error), fault = try m.optionalString(.fault), sha256 = try m.optionalString(.sha256)
        let opcode: Opcode
        if isClose {
            opcode = .close
        } else {
            guard let op, (0...15).contains(op) else { throw NotSure() }
            opcode = Opcode(rawValue: UInt8(op))
        }
        let payload: [UInt8]
        if let b64 {
            payload = try m.decodeBase64(b64)
        } else if isClose, let code {
            guard (0...0xFFFF).contains(code) else { throw NotSure() }
            var bytes = [UInt8(code >> 8), UInt8(code & 0xFF)]
            if let reason { bytes += m.scanner.textBytes(reason) }
            payload = bytes
        } else {
            payload = text.map { m.textBytes(.text, $0) } ?? []
        }
        let action: FrameAction
        let s = m.scanner
        if let name = actionName {
            if s.matches(name, "forwarded") {
                action = .forwarded
            } else if s.matches(name, "dropped") {
                action = .dropped
            } else if s.matches(name, "delayed") {
                action = .delayed(delay ?? 0)
            } else if s.matches(name, "injected") {
                action = .injected
            } else if s.matches(name, "observed") {
                action = .observed
            } else {
                throw NotSure()  // unknown, or escaped (rare enough for the tree to read)
            }
        } else {
            action = .forwarded
        }
        return FrameRecord(conn: conn, t: t, from: from, opcode: opcode, fin: fin, rsv1: rsv1, rsv2: rsv2, rsv3: rsv3,
                           masked: masked, length: length, payload: payload, compressed: compressed, action: action,
                           protocolError: error, fault: fault, sha256: sha256)
    }

    private static func open(_ m: borrowing RecordMembers) throws(NotSure) -> OpenRecord {
        OpenRecord(conn: try m.int(.conn), t: try m.time(.t), client: try m.string(.client),
                   server: try m.string(.server), upstream: try m.optionalString(.upstream))
    }

    private static func end(_ m: borrowing RecordMembers) throws(NotSure) -> EndRecord {
        EndRecord(conn: try m.int(.conn), t: try m.time(.t), side: try m.side(.side),
                  kind: try m.name(.kind, as: EndKind.self), detail: try m.optionalString(.detail),
                  leg: try m.optionalName(.leg, as: Leg.self))
    }

    private static func upgrade(_ m: borrowing RecordMembers) throws(NotSure) -> UpgradeRecord {
        UpgradeRecord(conn: try m.int(.conn), t: try m.time(.t), from: try m.side(.from),
                      method: try m.optionalString(.method), target: try m.optionalString(.target),
                      status: try m.optionalInt(.status), reason: try m.optionalString(.reason),
                      headers: try m.headers(.headers))
    }

    private static func fault(_ m: borrowing RecordMembers) throws(NotSure) -> FaultRecord {
        FaultRecord(conn: try m.optionalInt(.conn), t: try m.time(.t), rule: try m.string(.rule),
                    kind: try m.string(.kind), target: try m.optionalName(.target, as: Side.self),
                    detail: try m.string(.detail))
    }

    private static func note(_ m: borrowing RecordMembers) throws(NotSure) -> NoteRecord {
        let level = try m.name(.level, as: NoteRecord.Level.self)
        return NoteRecord(conn: try m.optionalInt(.conn), t: try m.time(.t), level: level, message: try m.string(.message))
    }

    private static func tunnel(_ m: borrowing RecordMembers) throws(NotSure) -> TunnelRecord {
        let event = try m.name(.event, as: TunnelRecord.Event.self)
        return TunnelRecord(conn: try m.int(.conn), t: try m.int64(.t), event: event,
                            client: try m.optionalString(.client), target: try m.string(.target),
                            bytesUp: try m.optionalInt(.bytesUp), bytesDown: try m.optionalInt(.bytesDown),
                            detail: try m.optionalString(.detail))
    }

    private static func http(_ m: borrowing RecordMembers) throws(NotSure) -> HTTPRecord {
        let t = try m.int64(.t)
        return HTTPRecord(
            conn: try m.int(.conn), t: t, tEnd: try m.optionalInt64(.tEnd) ?? t,
            client: try m.optionalString(.client) ?? "", method: try m.string(.method), url: try m.string(.url),
            requestHeaders: try m.headers(.reqHeaders), requestBody: try m.body(text: .reqBody, base64: .reqB64),
            requestLength: try m.optionalInt(.reqLen) ?? 0,
            status: try m.optionalInt(.status), reason: try m.optionalString(.reason),
            responseHeaders: try m.headers(.respHeaders), responseBody: try m.body(text: .respBody, base64: .respB64),
            responseLength: try m.optionalInt(.respLen) ?? 0, error: try m.optionalString(.error))
    }
}

extension RecordCoding {
    /// The direct decoder's answer alone (nil: "not sure"), for the differential fuzz
    /// target, which checks it against `decode` on every line it makes up, and requires it
    /// on every line `encode` writes.
    public static func decodeDirectly(_ line: UnsafeBufferPointer<UInt8>) -> CaptureRecord? {
        DirectRecordDecoder.decode(line)
    }
}
