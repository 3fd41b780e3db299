import JSON

/// Where the first elements of a top-level JSON array are, for the protocols whose
/// envelope is an array (Phoenix Channels V2's `[join_ref, ref, topic, event, payload]`).
extension JSONSkimmer {
    /// The spans of the first `limit` elements of the array `bytes` holds, in order (fewer
    /// when the array is shorter; later elements are validated, not returned); nil when
    /// `bytes` is not one valid JSON text or not an array. The same grammar and depth limit
    /// as `JSONParser`, in one pass.
    public static func elements(of bytes: UnsafeBufferPointer<UInt8>, limit: Int) -> [Span]? {
        var scanner = JSONScanner(bytes)
        return scanTopArray(&scanner, limit: max(0, limit))
    }

    /// `elements(of:limit:)` over an array's bytes.
    public static func elements<Bytes: Collection<UInt8>>(of bytes: Bytes, limit: Int) -> [Span]? {
        bytes.withContiguousStorageIfAvailable { elements(of: $0, limit: limit) } ?? elements(of: Array(bytes), limit: limit)
    }

    private static func scanTopArray(_ scanner: inout JSONScanner, limit: Int) -> [Span]? {
        scanner.skipWhitespace()
        guard scanner.consume(UInt8(ascii: "[")) else { return nil }
        var spans: [Span] = []
        spans.reserveCapacity(min(limit, 8))
        scanner.skipWhitespace()
        if !scanner.consume(UInt8(ascii: "]")) {
            while true {
                scanner.skipWhitespace()
                let start = scanner.index
                var escaped = false
                let isString = scanner.current == UInt8(ascii: "\"")
                if isString {
                    guard let string = scanner.string() else { return nil }
                    escaped = string.escaped
                } else {
                    // The array's elements are at depth 1, as the parser counts.
                    guard scanner.skipValue(depth: 1) else { return nil }
                }
                if spans.count < limit { spans.append(Span(range: start..<scanner.index, isString: isString, escaped: escaped)) }
                scanner.skipWhitespace()
                if scanner.consume(UInt8(ascii: ",")) { continue }
                guard scanner.consume(UInt8(ascii: "]")) else { return nil }
                break
            }
        }
        return scanner.isAtEndAfterWhitespace() ? spans : nil
    }
}
