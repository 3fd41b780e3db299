/// The base64 text of some bytes, as a sequence that `Array.append(contentsOf:)` stores in
/// one pass. Recording a binary frame appends its payload's text to the capture writer's
/// buffer; encoding into a zero-filled extension (the previous way) wrote every output
/// byte twice, and the fill was 20% of base64's cost in the bulk proxy profile.
///
/// How: `underestimatedCount` is the exact text length, so `append(contentsOf:)` reserves
/// it (with the array's usual geometric growth) and hands the new, uninitialized storage
/// to `_copyContents(initializing:)`, which encodes into it directly. This is the
/// standard library's own customization point for bulk copies (its contiguous
/// collections implement it the same way). Should a caller not go through it, iteration
/// still yields exactly the same bytes, only slower: both paths are tested against a
/// reference encoder.
struct Base64Text: Sequence {
    let input: UnsafeBufferPointer<UInt8>

    init(_ input: UnsafeBufferPointer<UInt8>) { self.input = input }

    /// Exact, not an estimate: callers may reserve it.
    var underestimatedCount: Int { Base64.encodedCount(input.count) }

    func makeIterator() -> IndexingIterator<[UInt8]> {
        guard !input.isEmpty else { return [].makeIterator() }
        return [UInt8](unsafeUninitializedCapacity: underestimatedCount) { buffer, count in
            Base64.encode(input, to: UnsafeMutableRawPointer(buffer.baseAddress!))
            count = underestimatedCount
        }.makeIterator()
    }

    /// Encodes into `buffer` when the whole text fits (it always does from `append`, which
    /// reserved `underestimatedCount`); otherwise falls back to iteration.
    func _copyContents(initializing buffer: UnsafeMutableBufferPointer<UInt8>)
        -> (IndexingIterator<[UInt8]>, UnsafeMutableBufferPointer<UInt8>.Index) {
        let count = underestimatedCount
        guard count > 0 else { return ([].makeIterator(), buffer.startIndex) }
        guard let base = buffer.baseAddress, count <= buffer.count else {
            var iterator = makeIterator()
            var written = buffer.startIndex
            while written < buffer.endIndex, let byte = iterator.next() {
                buffer.initializeElement(at: written, to: byte)
                written += 1
            }
            return (iterator, written)
        }
        Base64.encode(input, to: UnsafeMutableRawPointer(base))
        return ([].makeIterator(), buffer.startIndex + count)
    }
}
