import JSON
import Vocabulary
import WebSocket

/// Decodes the lines that make up nearly all of a capture (frame, close, open and end
/// records, as the writer writes them) straight from their bytes into a `CaptureRecord`,
/// without building a `JSONValue` tree first. The tree-based `RecordCoding.decode` parsed
/// every line into an ordered tree and then read the record out of it: about a third of
/// `faultline analyze`'s time on large captures.
///
/// Invariant: `decode` returns exactly what `RecordCoding.decode` returns for the same
/// line, or nil, meaning "not sure". It gives up (nil) on anything it does not need for a
/// well-formed line: another record type, a key it does not know or that does not belong
/// to the record's type, a repeated key, `null`, a number that is not a plain integer, a
/// literal or string that is not well formed. The caller then runs the tree-based decoder,
/// which gives the record or the error message; messages therefore come from one place only.
enum DirectRecordDecoder {
    static func decode(_ line: UnsafeBufferPointer<UInt8>) -> CaptureRecord? {
        var scanner = MemberScanner(line)
        guard let members = scanner.scanObject() else { return nil }
        guard let type = members.string(.type), !type.hasEscape else { return nil }
        switch scanner.word(type) {
        case "frame": return members.frame(isClose: false, in: line).map(CaptureRecord.frame)
        case "close": return members.frame(isClose: true, in: line).map(CaptureRecord.frame)
        case "open": return members.open(in: line).map(CaptureRecord.open)
        case "end": return members.end(in: line).map(CaptureRecord.end)
        default: return nil
        }
    }
}

extension RecordCoding {
    /// The direct decoder's answer alone (nil: "not sure"), for the differential fuzz
    /// target, which checks it against `decode` on every line it makes up.
    public static func decodeDirectly(_ line: UnsafeBufferPointer<UInt8>) -> CaptureRecord? {
        DirectRecordDecoder.decode(line)
    }
}

/// The keys the direct path knows, one bit each in `Members.seen`.
enum DirectKey: Int, CaseIterable {
    case type, conn, t, from, op, fin, rsv1, rsv2, rsv3, masked, len, compressed, action, delayUS
    case error, fault, text, b64, code, reason, client, server, upstream, side, kind, detail

    var name: StaticString {
        switch self {
        case .type: "type"
        case .conn: "conn"
        case .t: "t"
        case .from: "from"
        case .op: "op"
        case .fin: "fin"
        case .rsv1: "rsv1"
        case .rsv2: "rsv2"
        case .rsv3: "rsv3"
        case .masked: "masked"
        case .len: "len"
        case .compressed: "compressed"
        case .action: "action"
        case .delayUS: "delay_us"
        case .error: "error"
        case .fault: "fault"
        case .text: "text"
        case .b64: "b64"
        case .code: "code"
        case .reason: "reason"
        case .client: "client"
        case .server: "server"
        case .upstream: "upstream"
        case .side: "side"
        case .kind: "kind"
        case .detail: "detail"
        }
    }

    var bit: UInt32 { 1 << UInt32(rawValue) }

    /// The keys by the first byte of their name.
    static let byFirstByte: [[DirectKey]] = (0..<256).map { byte in
        allCases.filter { $0.name.utf8Start[0] == UInt8(byte) }
    }

    static func mask(_ keys: [DirectKey]) -> UInt32 { keys.reduce(0) { $0 | $1.bit } }

    static let frameKeys = mask([.type, .conn, .t, .from, .op, .fin, .rsv1, .rsv2, .rsv3, .masked, .len, .compressed,
                                 .action, .delayUS, .error, .fault, .text, .b64])
    /// Close records carry `code` and `reason` instead of `op` and `text`.
    static let closeKeys = mask([.type, .conn, .t, .from, .fin, .rsv1, .rsv2, .rsv3, .masked, .len, .compressed,
                                 .action, .delayUS, .error, .fault, .b64, .code, .reason])
    static let openKeys = mask([.type, .conn, .t, .client, .server, .upstream])
    static let endKeys = mask([.type, .conn, .t, .side, .kind, .detail])
}

/// A string value's place in the line: the bytes between its quotes.
struct StringSpan {
    var start: Int
    var end: Int
    var hasEscape: Bool
    var isASCII: Bool
}

/// One member's value as scanned: only the shapes the direct path accepts.
enum ScannedValue {
    case none
    case string(StringSpan)
    case integer(Int64)
    case bool(Bool)
}

/// The scanned members of one line, by key.
struct Members {
    var values = [ScannedValue](repeating: .none, count: DirectKey.allCases.count)
    var seen: UInt32 = 0

    func string(_ key: DirectKey) -> StringSpan? {
        if case .string(let s) = values[key.rawValue] { return s }
        return nil
    }

    /// The key's value when it is absent (nil inside) or an integer; nil for another type.
    func integer(_ key: DirectKey) -> Int64?? {
        switch values[key.rawValue] {
        case .none: return .some(nil)
        case .integer(let i): return .some(i)
        default: return nil
        }
    }

    /// The key's value when it is an integer within the record time range (`RecordTime`);
    /// nil otherwise (absent too): the tree-based decoder says what is wrong.
    func time(_ key: DirectKey) -> Int64? {
        guard case .integer(let t) = values[key.rawValue], RecordTime.isValid(t) else { return nil }
        return t
    }

    /// The key's value when it is absent (the default) or a boolean; nil for another type.
    func bool(_ key: DirectKey, default value: Bool) -> Bool? {
        switch values[key.rawValue] {
        case .none: return value
        case .bool(let b): return b
        default: return nil
        }
    }

    /// The key's text when it is absent (nil inside) or a well-formed string; nil otherwise.
    func text(_ key: DirectKey, in line: UnsafeBufferPointer<UInt8>) -> String?? {
        switch values[key.rawValue] {
        case .none: return .some(nil)
        case .string(let span):
            guard let s = JSONStringBytes.string(span, in: line) else { return nil }
            return .some(s)
        default: return nil
        }
    }

    func has(_ key: DirectKey) -> Bool { seen & key.bit != 0 }

    func side(_ key: DirectKey, in line: UnsafeBufferPointer<UInt8>) -> Side? {
        guard let span = string(key), !span.hasEscape else { return nil }
        switch MemberScanner.word(span, in: line) {
        case "client": return .client
        case "server": return .server
        default: return nil
        }
    }

    func frame(isClose: Bool, in line: UnsafeBufferPointer<UInt8>) -> FrameRecord? {
        guard seen & ~(isClose ? DirectKey.closeKeys : DirectKey.frameKeys) == 0,
              let conn = integer(.conn) ?? nil, let t = time(.t), let from = side(.from, in: line),
              let op = integer(.op), let length = integer(.len), let delay = integer(.delayUS),
              delay.map({ $0 >= 0 && $0 < RecordTime.limit }) ?? true, let code = integer(.code),
              let fin = bool(.fin, default: true), let rsv1 = bool(.rsv1, default: false),
              let rsv2 = bool(.rsv2, default: false), let rsv3 = bool(.rsv3, default: false),
              let masked = bool(.masked, default: false), let compressed = bool(.compressed, default: false),
              let error = text(.error, in: line), let fault = text(.fault, in: line) else { return nil }
        let opcode: Opcode
        if isClose {
            opcode = .close
        } else {
            guard let op, (0...15).contains(op) else { return nil }
            opcode = Opcode(rawValue: UInt8(op))
        }
        var action = FrameAction.forwarded
        if has(.action) {
            guard let span = string(.action), !span.hasEscape else { return nil }
            switch MemberScanner.word(span, in: line) {
            case "forwarded": action = .forwarded
            case "dropped": action = .dropped
            case "delayed": action = .delayed(delay ?? 0)
            case "injected": action = .injected
            case "observed": action = .observed
            default: return nil
            }
        }
        let payload: [UInt8]
        if has(.b64) {
            // Both `b64` and `text` present, or a close with both `b64` and `code`: rare,
            // and the tree-based decoder's rules for them are not repeated here.
            guard !has(.text), !has(.code), !has(.reason), let span = string(.b64), !span.hasEscape,
                  let bytes = Base64.decode(Substring(decoding: UnsafeBufferPointer(rebasing: line[span.start..<span.end]),
                                                      as: UTF8.self)) else { return nil }
            payload = bytes
        } else if isClose {
            if let code {
                guard (0...0xFFFF).contains(code), let reason = text(.reason, in: line) else { return nil }
                payload = [UInt8(code >> 8), UInt8(code & 0xFF)] + Array((reason ?? "").utf8)
            } else {
                guard let reason = text(.reason, in: line) else { return nil }
                _ = reason
                payload = []
            }
        } else if has(.text) {
            guard let span = string(.text), let bytes = JSONStringBytes.bytes(span, in: line) else { return nil }
            payload = bytes
        } else {
            payload = []
        }
        return FrameRecord(conn: Int(conn), t: t, from: from, opcode: opcode, fin: fin, rsv1: rsv1, rsv2: rsv2,
                           rsv3: rsv3, masked: masked, length: length.map { Int($0) } ?? payload.count, payload: payload,
                           compressed: compressed, action: action, protocolError: error, fault: fault)
    }

    func open(in line: UnsafeBufferPointer<UInt8>) -> OpenRecord? {
        guard seen & ~DirectKey.openKeys == 0, let conn = integer(.conn) ?? nil, let t = time(.t),
              let client = text(.client, in: line) ?? nil, let server = text(.server, in: line) ?? nil,
              let upstream = text(.upstream, in: line) else { return nil }
        return OpenRecord(conn: Int(conn), t: t, client: client, server: server, upstream: upstream)
    }

    func end(in line: UnsafeBufferPointer<UInt8>) -> EndRecord? {
        guard seen & ~DirectKey.endKeys == 0, let conn = integer(.conn) ?? nil, let t = time(.t),
              let side = side(.side, in: line), let kindSpan = string(.kind), !kindSpan.hasEscape,
              let kind = EndKind(rawValue: MemberScanner.word(kindSpan, in: line)),
              let detail = text(.detail, in: line) else { return nil }
        return EndRecord(conn: Int(conn), t: t, side: side, kind: kind, detail: detail)
    }
}

/// Walks one line's top-level object, member by member, recording where each known key's
/// value is. Every read is checked against the buffer's bounds.
struct MemberScanner {
    let b: UnsafeBufferPointer<UInt8>
    var i = 0

    init(_ line: UnsafeBufferPointer<UInt8>) { b = line }

    /// The members of `{...}` followed by nothing but white space; nil for anything else.
    mutating func scanObject() -> Members? {
        var members = Members()
        skipWhitespace()
        guard i < b.count, b[i] == UInt8(ascii: "{") else { return nil }
        i += 1
        while true {
            skipWhitespace()
            guard i < b.count, b[i] == UInt8(ascii: "\""), let keySpan = scanString(), !keySpan.hasEscape,
                  let key = Self.key(keySpan, in: b), members.seen & key.bit == 0 else { return nil }
            members.seen |= key.bit
            skipWhitespace()
            guard i < b.count, b[i] == UInt8(ascii: ":") else { return nil }
            i += 1
            skipWhitespace()
            guard let value = scanValue() else { return nil }
            members.values[key.rawValue] = value
            skipWhitespace()
            guard i < b.count else { return nil }
            if b[i] == UInt8(ascii: ",") { i += 1; continue }
            guard b[i] == UInt8(ascii: "}") else { return nil }
            i += 1
            skipWhitespace()
            return i == b.count ? members : nil
        }
    }

    private mutating func skipWhitespace() { i = JSONParser.whitespaceEnd(b, from: i) }

    private mutating func scanValue() -> ScannedValue? {
        guard i < b.count else { return nil }
        switch b[i] {
        case UInt8(ascii: "\""): return scanString().map(ScannedValue.string)
        case UInt8(ascii: "t"): return literal("true") ? .bool(true) : nil
        case UInt8(ascii: "f"): return literal("false") ? .bool(false) : nil
        case UInt8(ascii: "-"), UInt8(ascii: "0")...UInt8(ascii: "9"): return scanInteger().map(ScannedValue.integer)
        default: return nil
        }
    }

    private mutating func literal(_ word: StaticString) -> Bool {
        guard JSONParser.hasLiteral(word, b, at: i) else { return false }
        i += word.utf8CodeUnitCount
        return true
    }

    /// A plain JSON integer of at most 18 digits (so it cannot overflow); a fraction, an
    /// exponent or a longer number gives nil (the tree-based decoder has rules for those).
    /// The digit count is checked before a digit is added: checked after, the 19th digit
    /// of `9999999999999999999` overflowed `value * 10` and trapped.
    private mutating func scanInteger() -> Int64? {
        var negative = false
        if b[i] == UInt8(ascii: "-") { negative = true; i += 1 }
        let start = i
        var value: Int64 = 0
        while i < b.count, b[i] >= UInt8(ascii: "0"), b[i] <= UInt8(ascii: "9") {
            if i - start >= 18 { return nil }
            value = value * 10 + Int64(b[i] - UInt8(ascii: "0"))
            i += 1
        }
        let digits = i - start
        guard digits > 0, digits == 1 || b[start] != UInt8(ascii: "0") else { return nil }
        if i < b.count, b[i] == UInt8(ascii: ".") || b[i] == UInt8(ascii: "e") || b[i] == UInt8(ascii: "E") { return nil }
        return negative ? -value : value
    }

    /// The span of a string starting at the opening quote; nil for a raw control character
    /// or no closing quote. Escapes are only skipped here; `JSONStringBytes` checks them.
    private mutating func scanString() -> StringSpan? {
        i += 1
        let start = i
        var hasEscape = false
        var high: UInt8 = 0
        while i < b.count {
            let c = b[i]
            if c == UInt8(ascii: "\"") {
                let span = StringSpan(start: start, end: i, hasEscape: hasEscape, isASCII: high < 0x80)
                i += 1
                return span
            }
            if c < 0x20 { return nil }
            if c == UInt8(ascii: "\\") {
                hasEscape = true
                i += 2
                continue
            }
            high |= c
            i += 1
        }
        return nil
    }

    static func key(_ span: StringSpan, in b: UnsafeBufferPointer<UInt8>) -> DirectKey? {
        let n = span.end - span.start
        guard n > 0 else { return nil }
        // Candidates by first byte, so a key is compared with one to four names, not all.
        let candidates = DirectKey.byFirstByte[Int(b[span.start])]
        for key in candidates {
            let name = key.name
            guard name.utf8CodeUnitCount == n else { continue }
            var equal = true
            for k in 0..<n where b[span.start + k] != name.utf8Start[k] { equal = false; break }
            if equal { return key }
        }
        return nil
    }

    /// The bytes of an escape-free span as a string, for matching against known names.
    static func word(_ span: StringSpan, in b: UnsafeBufferPointer<UInt8>) -> String {
        String(decoding: UnsafeBufferPointer(rebasing: b[span.start..<span.end]), as: UTF8.self)
    }

    func word(_ span: StringSpan) -> String { Self.word(span, in: b) }
}

/// The contents of a JSON string span, unescaped, following `JSONParser` exactly: the
/// same escapes, the same surrogate-pair rules, UTF-8 validated. Nil where the parser
/// would throw.
enum JSONStringBytes {
    static func string(_ span: StringSpan, in b: UnsafeBufferPointer<UInt8>) -> String? {
        if !span.hasEscape {
            let slice = UnsafeBufferPointer(rebasing: b[span.start..<span.end])
            return span.isASCII ? String(decoding: slice, as: UTF8.self) : String(validating: slice, as: UTF8.self)
        }
        guard let bytes = bytes(span, in: b) else { return nil }
        return String(decoding: bytes, as: UTF8.self)
    }

    /// The unescaped bytes; nil for a bad escape, an unpaired surrogate or invalid UTF-8.
    static func bytes(_ span: StringSpan, in b: UnsafeBufferPointer<UInt8>) -> [UInt8]? {
        if !span.hasEscape {
            let slice = UnsafeBufferPointer(rebasing: b[span.start..<span.end])
            guard span.isASCII || UTF8Check.isValid(slice) else { return nil }
            return Array(slice)
        }
        var out: [UInt8] = []
        out.reserveCapacity(span.end - span.start)
        var i = span.start
        var rawNonASCII = !span.isASCII
        while i < span.end {
            // Copy the run up to the next escape in one go (text payloads are mostly runs).
            var runEnd = i
            while runEnd < span.end, b[runEnd] != UInt8(ascii: "\\") { runEnd += 1 }
            if runEnd > i {
                out.append(contentsOf: UnsafeBufferPointer(rebasing: b[i..<runEnd]))
                i = runEnd
                continue
            }
            guard i + 1 < span.end else { return nil }
            let escape = b[i + 1]
            i += 2
            switch escape {
            case UInt8(ascii: "\""): out.append(0x22)
            case UInt8(ascii: "\\"): out.append(0x5C)
            case UInt8(ascii: "/"): out.append(0x2F)
            case UInt8(ascii: "b"): out.append(0x08)
            case UInt8(ascii: "f"): out.append(0x0C)
            case UInt8(ascii: "n"): out.append(0x0A)
            case UInt8(ascii: "r"): out.append(0x0D)
            case UInt8(ascii: "t"): out.append(0x09)
            case UInt8(ascii: "u"):
                guard var scalar = hex4(b, at: i, end: span.end) else { return nil }
                i += 4
                if (0xD800..<0xDC00).contains(scalar) {
                    guard i + 1 < span.end, b[i] == UInt8(ascii: "\\"), b[i + 1] == UInt8(ascii: "u"),
                          let low = hex4(b, at: i + 2, end: span.end), (0xDC00..<0xE000).contains(low) else { return nil }
                    i += 6
                    scalar = 0x10000 + ((scalar - 0xD800) << 10) + (low - 0xDC00)
                } else if (0xDC00..<0xE000).contains(scalar) {
                    return nil
                }
                appendUTF8(scalar, to: &out)
            default:
                return nil
            }
        }
        // Escapes only ever produce well-formed UTF-8; raw bytes above 0x7F need the check.
        if rawNonASCII { rawNonASCII = !UTF8Check.isValid(out) }
        return rawNonASCII ? nil : out
    }

    /// The `\u` digits at `start`, within the string that ends at `end`.
    private static func hex4(_ b: UnsafeBufferPointer<UInt8>, at start: Int, end: Int) -> UInt32? {
        guard start + 4 <= end else { return nil }
        return JSONParser.hex4(b, at: start)
    }

    /// `scalar` is below 0x110000 and not a surrogate (checked by the caller).
    private static func appendUTF8(_ scalar: UInt32, to out: inout [UInt8]) {
        switch scalar {
        case 0..<0x80:
            out.append(UInt8(scalar))
        case 0x80..<0x800:
            out.append(UInt8(0xC0 | scalar >> 6))
            out.append(UInt8(0x80 | scalar & 0x3F))
        case 0x800..<0x10000:
            out.append(UInt8(0xE0 | scalar >> 12))
            out.append(UInt8(0x80 | scalar >> 6 & 0x3F))
            out.append(UInt8(0x80 | scalar & 0x3F))
        default:
            out.append(UInt8(0xF0 | scalar >> 18))
            out.append(UInt8(0x80 | scalar >> 12 & 0x3F))
            out.append(UInt8(0x80 | scalar >> 6 & 0x3F))
            out.append(UInt8(0x80 | scalar & 0x3F))
        }
    }
}
