/// Where the first elements of a top-level JSON array are, for the protocols whose
/// envelope is an array (Phoenix Channels V2's `[join_ref, ref, topic, event, payload]`).
extension JSONSkimmer {
    /// The spans of the first `limit` elements of the array `bytes` holds, in order (fewer
    /// when the array is shorter; later elements are validated, not returned); nil when
    /// `bytes` is not one valid JSON text or not an array. The same grammar and depth limit
    /// as `JSONParser`, in one pass.
    public static func elements(of bytes: UnsafeBufferPointer<UInt8>, limit: Int) -> [Span]? {
        var skimmer = JSONSkimmer(buffer: bytes)
        return skimmer.scanTopArray(limit: max(0, limit))
    }

    /// `elements(of:limit:)` over an array's bytes.
    public static func elements<Bytes: Collection<UInt8>>(of bytes: Bytes, limit: Int) -> [Span]? {
        bytes.withContiguousStorageIfAvailable { elements(of: $0, limit: limit) } ?? elements(of: Array(bytes), limit: limit)
    }

    mutating func scanTopArray(limit: Int) -> [Span]? {
        skipWhitespace()
        guard index < buffer.count, buffer[index] == UInt8(ascii: "[") else { return nil }
        index += 1
        var spans: [Span] = []
        spans.reserveCapacity(min(limit, 8))
        skipWhitespace()
        if index < buffer.count, buffer[index] == UInt8(ascii: "]") {
            index += 1
        } else {
            while true {
                skipWhitespace()
                let start = index
                var escaped = false
                let isString = index < buffer.count && buffer[index] == UInt8(ascii: "\"")
                if isString {
                    guard let string = skimString() else { return nil }
                    escaped = string.escaped
                } else {
                    // The array's elements are at depth 1, as the parser counts.
                    guard skimValue(depth: 1) else { return nil }
                }
                if spans.count < limit { spans.append(Span(range: start..<index, isString: isString, escaped: escaped)) }
                skipWhitespace()
                guard index < buffer.count else { return nil }
                if buffer[index] == UInt8(ascii: ",") { index += 1; continue }
                if buffer[index] == UInt8(ascii: "]") { index += 1; break }
                return nil
            }
        }
        skipWhitespace()
        return index == buffer.count ? spans : nil
    }
}
