import JSON
import Vocabulary
import WebSocket

/// Every key of the capture format after the header (docs/capture-format.md), one bit each
/// in `RecordMembers.seen`: the keys the direct decoder reads, for every record type.
enum RecordKey: Int, CaseIterable {
    case type, conn, t, from, op, fin, rsv1, rsv2, rsv3, masked, len, compressed, action, delayUS
    case error, fault, sha256, text, b64, code, reason, client, server, upstream, side, kind, detail, leg
    case method, target, status, headers, rule, level, message, event, bytesUp, bytesDown
    case tEnd, url, reqHeaders, reqLen, reqBody, reqB64, respHeaders, respLen, respBody, respB64

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
        case .sha256: "sha256"
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
        case .leg: "leg"
        case .method: "method"
        case .target: "target"
        case .status: "status"
        case .headers: "headers"
        case .rule: "rule"
        case .level: "level"
        case .message: "message"
        case .event: "event"
        case .bytesUp: "bytes_up"
        case .bytesDown: "bytes_down"
        case .tEnd: "t_end"
        case .url: "url"
        case .reqHeaders: "req_headers"
        case .reqLen: "req_len"
        case .reqBody: "req_body"
        case .reqB64: "req_b64"
        case .respHeaders: "resp_headers"
        case .respLen: "resp_len"
        case .respBody: "resp_body"
        case .respB64: "resp_b64"
        }
    }

    var bit: UInt64 { 1 << UInt64(rawValue) }

    /// How many keys there are (`allCases` makes an array on every read).
    static let count = allCases.count

    /// The keys in an open-addressing table, by a hash of a name's length, first and last
    /// byte (no two keys of the format share one but `bytes_up` and `url`): a key is found
    /// with one or two byte comparisons. Entries are the keys themselves, nil for empty
    /// (one byte each; a key's raw value plus one, made back into a key by `init(rawValue:)`
    /// on every lookup, was a call a key).
    static let table: [RecordKey?] = {
        var table = [RecordKey?](repeating: nil, count: 256)
        for key in allCases {
            let name = UnsafeBufferPointer(start: key.name.utf8Start, count: key.name.utf8CodeUnitCount)
            var slot = hash(name.count, first: name[0], last: name[name.count - 1])
            while table[slot].isPresent { slot = (slot &+ 1) & 255 }
            table[slot] = key
        }
        return table
    }()

    @inline(__always) static func hash(_ length: Int, first: UInt8, last: UInt8) -> Int {
        (length &* 11 &+ Int(first) &* 12 &+ Int(last)) & 255
    }

    /// The key a scanned name spells, if it is one of the format's; `table` is `Self.table`
    /// (fetched once per line by the line's reader, not once per key).
    @inline(__always)
    static func named(_ token: JSONScanner.StringToken, in scanner: JSONScanner, table: [RecordKey?] = table) -> RecordKey? {
        let content = token.content
        guard !token.escaped, !content.isEmpty else { return nil }
        var slot = hash(content.count, first: scanner.bytes[content.lowerBound], last: scanner.bytes[content.upperBound - 1])
        while true {
            guard let key = table[slot] else { return nil }
            if scanner.matches(token, key.name) { return key }
            slot = (slot &+ 1) & 255
        }
    }
}

/// Why the direct decoder gives a line up: nothing more to say, the tree-based decoder
/// reads the line again and gives the record or the error message.
struct NotSure: Error {}

/// One member's value as scanned (already validated by `JSONScanner`), sixteen bytes: a
/// line's members are a table of them that is cheap to clear. Places are byte offsets in
/// the line (which `RecordMembers` keeps under 4 GiB).
enum ScannedValue {
    /// Absent, or `null` (which every record type reads as absent).
    case none
    /// A string's content (between its quotes), as its `JSONScanner.StringToken` says.
    case string(start: UInt32, end: UInt32, escaped: Bool, isASCII: Bool)
    /// A number written as an integer within Int64.
    case integer(Int64)
    /// Any other number (a fraction, an exponent, or beyond Int64).
    case otherNumber
    case bool(Bool)
    /// An array starting at this offset, read again by `headers` when asked for.
    case array(start: UInt32)
    /// An object: no key of the format holds one after the header.
    case object

    /// A scanned string's place (the line is under 4 GiB: `RecordMembers` checks).
    static func string(_ token: JSONScanner.StringToken) -> ScannedValue {
        .string(start: UInt32(truncatingIfNeeded: token.content.lowerBound),
                end: UInt32(truncatingIfNeeded: token.content.upperBound),
                escaped: token.escaped, isASCII: token.isASCII)
    }
}

/// The members of one line by key, with typed reads that mirror `Fields` (the tree-based
/// decoder's) exactly, throwing `NotSure` wherever `Fields` would throw. Not copyable: it
/// is a view of a table of 48 values on the stack (`read`), valid only inside `read`.
///
/// The table is not a stored `InlineArray`: reading one element of a stored `InlineArray`
/// through a borrowed `self` copied all 768 bytes first (this toolchain, -O), and every
/// typed read did it: a tenth of the record decoder's instructions.
struct RecordMembers: ~Copyable {
    private(set) var scanner: JSONScanner
    private let values: UnsafeMutableBufferPointer<ScannedValue>
    /// The text of the `text` member (a frame's payload), made while it was scanned
    /// (`JSONScanner.stringWithText`): one pass over a line's longest string, not two.
    private var textOfText: [UInt8]?

    /// `body` of the members of `line`, scanned into a table on the stack.
    static func read<Result>(_ line: UnsafeBufferPointer<UInt8>,
                             _ body: (borrowing RecordMembers) throws(NotSure) -> Result) throws(NotSure) -> Result {
        try withUnsafeTemporaryAllocation(of: ScannedValue.self, capacity: RecordKey.count) {
            (table) throws(NotSure) -> Result in
            table.initialize(repeating: .none)  // (trivial values: nothing to deinitialize)
            // Room for the `text` member's text on its way into its array (`stringWithText`).
            return try withUnsafeTemporaryAllocation(of: UInt8.self, capacity: max(1, line.count)) {
                (scratch) throws(NotSure) -> Result in
                try body(try RecordMembers(line, table: table, scratch: scratch))
            }
        }
    }

    /// Scans `{...}` followed by nothing but white space. Keys outside the format are
    /// skipped, as the tree-based decoder ignores them; a repeated key of the format, or
    /// a key with an escape (which might spell one), is `NotSure`, and so is a line of
    /// 4 GiB or more (offsets are 32 bits). `table`: one value per key, all `.none`.
    private init(_ line: UnsafeBufferPointer<UInt8>, table values: UnsafeMutableBufferPointer<ScannedValue>,
                 scratch: UnsafeMutableBufferPointer<UInt8>) throws(NotSure) {
        scanner = JSONScanner(line)
        self.values = values
        textOfText = nil
        guard line.count < Int(UInt32.max) else { throw NotSure() }
        let table = RecordKey.table
        var seen: UInt64 = 0
        scanner.skipWhitespace()
        guard scanner.consume(UInt8(ascii: "{")) else { throw NotSure() }
        scanner.skipWhitespace()
        if scanner.consume(UInt8(ascii: "}")) { throw NotSure() }  // no type
        while true {
            scanner.skipWhitespace()
            guard scanner.current == UInt8(ascii: "\""), let name = scanner.shortString(), !name.escaped else { throw NotSure() }
            let key = RecordKey.named(name, in: scanner, table: table)
            if let key {
                guard seen & key.bit == 0 else { throw NotSure() }
                seen |= key.bit
            }
            scanner.skipWhitespace()
            guard scanner.consume(UInt8(ascii: ":")) else { throw NotSure() }
            scanner.skipWhitespace()
            if key == .text, scanner.current == UInt8(ascii: "\"") {
                guard let (token, text) = scanner.stringWithText(scratch: scratch) else { throw NotSure() }
                values[RecordKey.text.rawValue] = .string(token)
                textOfText = text
            } else if let key {
                values[key.rawValue] = try Self.scanValue(&scanner)
            } else {
                guard scanner.skipValue(depth: 1) else { throw NotSure() }
            }
            scanner.skipWhitespace()
            if scanner.consume(UInt8(ascii: ",")) { continue }
            guard scanner.consume(UInt8(ascii: "}")), scanner.isAtEndAfterWhitespace() else { throw NotSure() }
            return
        }
    }

    private static func scanValue(_ scanner: inout JSONScanner) throws(NotSure) -> ScannedValue {
        let start = scanner.index
        switch scanner.current ?? 0 {  // 0: the end, which no value starts with
        case UInt8(ascii: "\""):
            if let token = scanner.shortString() { return .string(token) }
        case UInt8(ascii: "t"):
            if scanner.literal("true") { return .bool(true) }
        case UInt8(ascii: "f"):
            if scanner.literal("false") { return .bool(false) }
        case UInt8(ascii: "n"):
            if scanner.literal("null") { return .none }
        case UInt8(ascii: "["):
            if scanner.skipValue(depth: 1) { return .array(start: UInt32(truncatingIfNeeded: start)) }
        case UInt8(ascii: "{"):
            if scanner.skipValue(depth: 1) { return .object }
        case UInt8(ascii: "-"), UInt8(ascii: "0")...UInt8(ascii: "9"):
            if let token = scanner.shortNumber() { return token.integer.map(ScannedValue.integer) ?? .otherNumber }
        default:
            break
        }
        throw NotSure()
    }

    subscript(key: RecordKey) -> ScannedValue { values[key.rawValue] }

    func isPresent(_ key: RecordKey) -> Bool {
        if case .none = self[key] { return false }
        return true
    }

    // MARK: Typed reads, as `Fields` reads them

    func optionalToken(_ key: RecordKey) throws(NotSure) -> JSONScanner.StringToken? {
        switch self[key] {
        case .none: return nil
        case .string(let start, let end, let escaped, let isASCII):
            return JSONScanner.StringToken(content: Int(start)..<Int(end), escaped: escaped, isASCII: isASCII)
        default: throw NotSure()
        }
    }

    func token(_ key: RecordKey) throws(NotSure) -> JSONScanner.StringToken {
        guard let token = try optionalToken(key) else { throw NotSure() }
        return token
    }

    func optionalString(_ key: RecordKey) throws(NotSure) -> String? { try optionalToken(key).map(scanner.text) }
    func string(_ key: RecordKey) throws(NotSure) -> String { scanner.text(try token(key)) }

    /// An integer written as one (a `1.0` or `1e3`, which the tree reads as 1 and 1000,
    /// is `NotSure`).
    func optionalInt64(_ key: RecordKey) throws(NotSure) -> Int64? {
        switch self[key] {
        case .none: return nil
        case .integer(let value): return value
        default: throw NotSure()
        }
    }

    func int64(_ key: RecordKey) throws(NotSure) -> Int64 {
        guard let value = try optionalInt64(key) else { throw NotSure() }
        return value
    }

    func optionalInt(_ key: RecordKey) throws(NotSure) -> Int? { try optionalInt64(key).map { Int($0) } }
    func int(_ key: RecordKey) throws(NotSure) -> Int { Int(try int64(key)) }

    /// A record time (`RecordTime`).
    func time(_ key: RecordKey) throws(NotSure) -> Int64 {
        let t = try int64(key)
        guard RecordTime.isValid(t) else { throw NotSure() }
        return t
    }

    /// A duration in microseconds, from 0 to below `RecordTime.limit`.
    func optionalDuration(_ key: RecordKey) throws(NotSure) -> Int64? {
        guard let d = try optionalInt64(key) else { return nil }
        guard d >= 0, d < RecordTime.limit else { throw NotSure() }
        return d
    }

    func bool(_ key: RecordKey, default value: Bool) throws(NotSure) -> Bool {
        switch self[key] {
        case .none: return value
        case .bool(let b): return b
        default: throw NotSure()
        }
    }

    /// A side, matched on the bytes (it is in every frame); an escaped spelling is read
    /// as `name` reads it.
    func side(_ key: RecordKey) throws(NotSure) -> Side {
        let token = try token(key)
        if scanner.matches(token, "client") { return .client }
        if scanner.matches(token, "server") { return .server }
        return try name(key, as: Side.self)
    }

    /// A string naming one case of `T` (the tree reads the name, then the case).
    func optionalName<T: RawRepresentable<String>>(_ key: RecordKey, as _: T.Type) throws(NotSure) -> T? {
        guard let name = try optionalString(key) else { return nil }
        guard let value = T(rawValue: name) else { throw NotSure() }
        return value
    }

    func name<T: RawRepresentable<String>>(_ key: RecordKey, as type: T.Type) throws(NotSure) -> T {
        guard let value = try optionalName(key, as: type) else { throw NotSure() }
        return value
    }

    /// The text of the string member `key` (escapes decoded), scanned as `token`.
    func textBytes(_ key: RecordKey, _ token: JSONScanner.StringToken) -> [UInt8] {
        if key == .text, let made = textOfText { return made }
        return scanner.textBytes(token)
    }

    /// A body as `text` (UTF-8) or `base64`, or none.
    func body(text: RecordKey, base64: RecordKey) throws(NotSure) -> [UInt8] {
        if let token = try optionalToken(text) { return textBytes(text, token) }
        guard let token = try optionalToken(base64) else { return [] }
        return try decodeBase64(token)
    }

    func decodeBase64(_ token: JSONScanner.StringToken) throws(NotSure) -> [UInt8] {
        let decoded = token.escaped
            ? Base64.decode(scanner.text(token))
            : Base64.decode(Substring(decoding: UnsafeBufferPointer(rebasing: scanner.bytes[token.content]), as: UTF8.self))
        guard let decoded else { throw NotSure() }
        return decoded
    }

    /// `[[name, value], ...]`, or none: the array is read again here (the scan validated it,
    /// so the strings are not checked a second time).
    func headers(_ key: RecordKey) throws(NotSure) -> [HeaderField] {
        switch self[key] {
        case .none: return []
        case .array(let start):
            var s = JSONScanner(scanner.bytes, at: Int(start))
            var headers: [HeaderField] = []
            _ = s.consume(UInt8(ascii: "["))
            s.skipWhitespace()
            if s.consume(UInt8(ascii: "]")) { return headers }
            while true {
                s.skipWhitespace()
                guard s.consume(UInt8(ascii: "[")) else { throw NotSure() }
                s.skipWhitespace()
                guard s.current == UInt8(ascii: "\""), let name = s.string() else { throw NotSure() }
                s.skipWhitespace()
                guard s.consume(UInt8(ascii: ",")) else { throw NotSure() }
                s.skipWhitespace()
                guard s.current == UInt8(ascii: "\""), let value = s.string() else { throw NotSure() }
                s.skipWhitespace()
                guard s.consume(UInt8(ascii: "]")) else { throw NotSure() }
                headers.append(HeaderField(s.text(name), s.text(value)))
                s.skipWhitespace()
                if s.consume(UInt8(ascii: ",")) { continue }
                guard s.consume(UInt8(ascii: "]")) else { throw NotSure() }
                return headers
            }
        default:
            throw NotSure()
        }
    }
}
