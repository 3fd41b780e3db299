import JSON
import Vocabulary
import WebSocket

/// Why one line is not a record. The reader adds the file, line and offset.
public struct RecordDecodingError: Error, Sendable, Equatable, CustomStringConvertible {
    public var message: String
    /// Set when the line is a well-formed record of a type this version does not know
    /// (a newer writer's): readers skip such lines instead of failing.
    public var unknownType: String?
    public init(_ message: String, unknownType: String? = nil) {
        self.message = message
        self.unknownType = unknownType
    }
    public var description: String { message }
}

extension RecordCoding {
    /// Decodes one line (with or without its newline).
    public static func decode<Bytes: Collection>(_ line: Bytes) throws(RecordDecodingError) -> CaptureRecord
    where Bytes.Element == UInt8 {
        let value: JSONValue
        do {
            value = try JSONParser.parse(line)
        } catch {
            throw RecordDecodingError("not valid JSON (at byte \(error.offset) of the line: \(error.reason))")
        }
        guard let object = value.objectValue else {
            throw RecordDecodingError("expected a JSON object, found \(value.typeName)")
        }
        return try decode(object)
    }

    public static func decode(_ object: JSONObject) throws(RecordDecodingError) -> CaptureRecord {
        let f = Fields(object: object)
        let type = try f.string("type")
        switch type {
        case "header":
            let format = try f.string("format")
            guard format == CaptureHeader.formatName else {
                throw RecordDecodingError("header format is \"\(format)\" (expected \"\(CaptureHeader.formatName)\")")
            }
            var header = CaptureHeader(
                version: try f.int("version"), tool: try f.string("tool"),
                startedAt: try f.time("started_at_us"), source: try f.string("source"),
                settings: try f.optionalObject("settings") ?? JSONObject(),
                recording: try f.optionalString("recording"), part: try f.optionalInt("part"))
            header.spec = try f.optionalObject("spec").map { (object) throws(RecordDecodingError) in try RecordedSpec(json: object) }
            return .header(header)
        case "open":
            return .open(OpenRecord(
                conn: try f.int("conn"), t: try f.time("t"), client: try f.string("client"),
                server: try f.string("server"), upstream: try f.optionalString("upstream")))
        case "upgrade":
            return .upgrade(UpgradeRecord(
                conn: try f.int("conn"), t: try f.time("t"), from: try f.side("from"),
                method: try f.optionalString("method"), target: try f.optionalString("target"),
                status: try f.optionalInt("status"), reason: try f.optionalString("reason"),
                headers: try f.headers("headers")))
        case "frame", "close":
            return .frame(try decodeFrame(f, isClose: type == "close"))
        case "end":
            let kindName = try f.string("kind")
            guard let kind = EndKind(rawValue: kindName) else {
                throw RecordDecodingError("key \"kind\": unknown end kind \"\(kindName)\" (expected one of: fin, rst, error, capture-end)")
            }
            var leg: Leg?
            if let legName = try f.optionalString("leg") {
                guard let value = Leg(rawValue: legName) else {
                    throw RecordDecodingError("key \"leg\": unknown leg \"\(legName)\" (expected one of: client, upstream)")
                }
                leg = value
            }
            return .end(EndRecord(
                conn: try f.int("conn"), t: try f.time("t"), side: try f.side("side"), kind: kind,
                detail: try f.optionalString("detail"), leg: leg))
        case "fault":
            return .fault(FaultRecord(
                conn: try f.optionalInt("conn"), t: try f.time("t"), rule: try f.string("rule"),
                kind: try f.string("kind"), target: try f.optionalSide("target"), detail: try f.string("detail")))
        case "note":
            let levelName = try f.string("level")
            guard let level = NoteRecord.Level(rawValue: levelName) else {
                throw RecordDecodingError("key \"level\": unknown level \"\(levelName)\" (expected one of: info, warning, error)")
            }
            return .note(NoteRecord(conn: try f.optionalInt("conn"), t: try f.time("t"), level: level,
                                    message: try f.string("message")))
        case "tunnel":
            return try decodeTunnel(f)
        case "http":
            return try decodeHTTP(f)
        default:
            throw RecordDecodingError(
                "unknown record type \"\(type)\" (expected one of: \(recordTypes.joined(separator: ", ")))", unknownType: type)
        }
    }

    /// Frames are most of any capture, so their keys are read in one pass over the
    /// members instead of one linear lookup per key.
    private static func decodeFrame(_ f: Fields, isClose: Bool) throws(RecordDecodingError) -> FrameRecord {
        var conn: Int?, t: Int64?, from: Side?, op: Int?, code: Int?, length: Int?, delay: Int64?
        var fin = true, rsv1 = false, rsv2 = false, rsv3 = false, masked = false, compressed = false
        var text: String?, b64: String?, reason: String?, actionName = "forwarded", error: String?, fault: String?
        var sha256: String?
        for (key, value) in f.object.members where !value.isNull {
            switch key {
            case "conn": conn = try f.int(key, value)
            case "t": t = try f.time(key, value)
            case "from": from = try f.side(key, value)
            case "op": op = try f.int(key, value)
            case "fin": fin = try f.bool(key, value)
            case "rsv1": rsv1 = try f.bool(key, value)
            case "rsv2": rsv2 = try f.bool(key, value)
            case "rsv3": rsv3 = try f.bool(key, value)
            case "masked": masked = try f.bool(key, value)
            case "len": length = try f.int(key, value)
            case "compressed": compressed = try f.bool(key, value)
            case "action": actionName = try f.string(key, value)
            case "delay_us": delay = try f.duration(key, value)
            case "error": error = try f.string(key, value)
            case "fault": fault = try f.string(key, value)
            case "sha256": sha256 = try f.string(key, value)
            case "text": text = try f.string(key, value)
            case "b64": b64 = try f.string(key, value)
            case "code": code = try f.int(key, value)
            case "reason": reason = try f.string(key, value)
            default: break
            }
        }
        guard let conn else { throw RecordDecodingError("missing key \"conn\"") }
        guard let t else { throw RecordDecodingError("missing key \"t\"") }
        guard let from else { throw RecordDecodingError("missing key \"from\"") }
        let opcode: Opcode
        if isClose {
            opcode = .close
        } else {
            guard let op else { throw RecordDecodingError("missing key \"op\"") }
            guard (0...15).contains(op) else { throw RecordDecodingError("key \"op\": \(op) is not an opcode (expected 0...15)") }
            opcode = Opcode(rawValue: UInt8(op))
        }
        let payload: [UInt8]
        if let b64 {
            guard let bytes = Base64.decode(b64) else { throw RecordDecodingError("key \"b64\": not valid base64") }
            payload = bytes
        } else if isClose, let code {
            guard (0...0xFFFF).contains(code) else { throw RecordDecodingError("key \"code\": \(code) does not fit 16 bits") }
            payload = [UInt8(code >> 8), UInt8(code & 0xFF)] + Array((reason ?? "").utf8)
        } else {
            payload = Array((text ?? "").utf8)
        }
        let action: FrameAction
        switch actionName {
        case "forwarded": action = .forwarded
        case "dropped": action = .dropped
        case "delayed": action = .delayed(delay ?? 0)
        case "injected": action = .injected
        case "observed": action = .observed
        default:
            throw RecordDecodingError(
                "key \"action\": unknown action \"\(actionName)\" (expected one of: forwarded, dropped, delayed, injected, observed)")
        }
        return FrameRecord(conn: conn, t: t, from: from, opcode: opcode, fin: fin, rsv1: rsv1, rsv2: rsv2, rsv3: rsv3,
                           masked: masked, length: length, payload: payload, compressed: compressed, action: action,
                           protocolError: error, fault: fault, sha256: sha256)
    }
}

/// Typed access to a record's keys with errors that name the key and what it should hold.
struct Fields {
    let object: JSONObject

    func value(_ key: String) throws(RecordDecodingError) -> JSONValue {
        guard let value = object[key], !value.isNull else { throw RecordDecodingError("missing key \"\(key)\"") }
        return value
    }

    func mismatch(_ key: String, _ expected: String, _ value: JSONValue) -> RecordDecodingError {
        RecordDecodingError("key \"\(key)\": expected \(expected), found \(value.typeName)")
    }

    func string(_ key: String) throws(RecordDecodingError) -> String { try string(key, try value(key)) }
    func int64(_ key: String) throws(RecordDecodingError) -> Int64 { try int64(key, try value(key)) }
    func int(_ key: String) throws(RecordDecodingError) -> Int { Int(try int64(key)) }

    func string(_ key: String, _ v: JSONValue) throws(RecordDecodingError) -> String {
        guard let s = v.stringValue else { throw mismatch(key, "a string", v) }
        return s
    }

    func int64(_ key: String, _ v: JSONValue) throws(RecordDecodingError) -> Int64 {
        guard let i = v.intValue else {
            if let d = v.doubleValue, d.rounded() == d {
                throw RecordDecodingError("key \"\(key)\": \(d) is out of range (expected an integer from \(Int64.min) to \(Int64.max))")
            }
            throw mismatch(key, "an integer", v)
        }
        return i
    }

    func int(_ key: String, _ v: JSONValue) throws(RecordDecodingError) -> Int { Int(try int64(key, v)) }

    /// A record time: an integer strictly within ±`RecordTime.limit`, so that the
    /// analyzer's arithmetic on times cannot overflow.
    func time(_ key: String) throws(RecordDecodingError) -> Int64 { try time(key, try value(key)) }

    func time(_ key: String, _ v: JSONValue) throws(RecordDecodingError) -> Int64 {
        let t = try int64(key, v)
        guard RecordTime.isValid(t) else {
            throw RecordDecodingError("key \"\(key)\": \(t) is out of range (expected microseconds within ±\(RecordTime.limit))")
        }
        return t
    }

    /// A duration in microseconds: from 0 to below `RecordTime.limit`.
    func duration(_ key: String, _ v: JSONValue) throws(RecordDecodingError) -> Int64 {
        let d = try int64(key, v)
        guard d >= 0, d < RecordTime.limit else {
            throw RecordDecodingError("key \"\(key)\": \(d) is out of range (expected microseconds from 0 to \(RecordTime.limit - 1))")
        }
        return d
    }

    func bool(_ key: String, _ v: JSONValue) throws(RecordDecodingError) -> Bool {
        guard let b = v.boolValue else { throw mismatch(key, "true or false", v) }
        return b
    }

    func optionalString(_ key: String) throws(RecordDecodingError) -> String? {
        guard let v = object[key], !v.isNull else { return nil }
        return try string(key)
    }

    func optionalInt64(_ key: String) throws(RecordDecodingError) -> Int64? {
        guard let v = object[key], !v.isNull else { return nil }
        return try int64(key)
    }

    func optionalInt(_ key: String) throws(RecordDecodingError) -> Int? { try optionalInt64(key).map { Int($0) } }

    func optionalBool(_ key: String) throws(RecordDecodingError) -> Bool? {
        guard let v = object[key], !v.isNull else { return nil }
        guard let b = v.boolValue else { throw mismatch(key, "true or false", v) }
        return b
    }

    func optionalObject(_ key: String) throws(RecordDecodingError) -> JSONObject? {
        guard let v = object[key], !v.isNull else { return nil }
        guard let o = v.objectValue else { throw mismatch(key, "an object", v) }
        return o
    }

    func side(_ key: String) throws(RecordDecodingError) -> Side { try side(key, try value(key)) }

    func side(_ key: String, _ v: JSONValue) throws(RecordDecodingError) -> Side {
        let name = try string(key, v)
        guard let side = Side(rawValue: name) else {
            throw RecordDecodingError("key \"\(key)\": unknown side \"\(name)\" (expected client or server)")
        }
        return side
    }

    func optionalSide(_ key: String) throws(RecordDecodingError) -> Side? {
        guard let v = object[key], !v.isNull else { return nil }
        return try side(key)
    }

    func headers(_ key: String) throws(RecordDecodingError) -> [HeaderField] {
        guard let v = object[key], !v.isNull else { return [] }
        guard let array = v.arrayValue else { throw mismatch(key, "an array of [name, value] pairs", v) }
        var headers: [HeaderField] = []
        for pair in array {
            guard let items = pair.arrayValue, items.count == 2, let name = items[0].stringValue,
                  let value = items[1].stringValue else {
                throw RecordDecodingError("key \"\(key)\": expected [name, value] string pairs, found \(pair)")
            }
            headers.append(HeaderField(name, value))
        }
        return headers
    }
}
