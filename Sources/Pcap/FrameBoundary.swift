import WebSocket

/// Finds where WebSocket frames start in a byte stream picked up in the middle (a capture
/// that began mid-connection, or the bytes after a hole). A position counts as a frame
/// boundary only when it can be proven: from there, whole plausible frame headers follow one
/// another and land exactly on the end of a TCP segment, `minFrames` frames or more.
/// Plausible means: a defined opcode, RSV bits only as negotiated, the masking the
/// direction requires, a minimal length encoding, and control frames short and final.
struct FrameBoundaryFinder {
    enum Result: Equatable {
        /// A proven boundary at this offset of the buffer.
        case found(Int)
        /// No proof yet; positions before this offset can never be proven (drop them).
        case needMore(discardable: Int)
    }

    var masked: Bool
    var rsv1Allowed: Bool
    var maxPayload: Int
    var minFrames: Int

    /// The whole frame's length (header and payload) at `offset`, or nil when the bytes there
    /// cannot be a frame header; `.some(nil)` when more bytes are needed to tell. The header
    /// is read by `FrameHeader.parse`; what makes it plausible is judged here.
    func frameLength(in b: UnsafeRawBufferPointer, at offset: Int) -> Int?? {
        guard b.count - offset >= 2 else { return .some(nil) }
        let b0 = b[offset], b1 = b[offset + 1]
        let opcode = b0 & 0x0F
        let fin = b0 & 0x80 != 0
        // What the first two bytes alone rule out, before waiting for the rest of a header.
        if b0 & 0x30 != 0 { return nil }                       // rsv2, rsv3
        if b0 & 0x40 != 0, !rsv1Allowed || opcode > 2 { return nil }
        switch opcode {
        case 0, 1, 2: break
        case 8, 9, 10: if !fin { return nil }
        default: return nil
        }
        if (b1 & 0x80 != 0) != masked { return nil }
        if opcode >= 8, b1 & 0x7F > 125 { return nil }
        guard let header = FrameHeader.parse(UnsafeRawBufferPointer(rebasing: b[offset...])) else { return .some(nil) }
        if header.hasNonMinimalLength || header.payloadLength > UInt64(maxPayload) { return nil }
        if opcode == 8, header.payloadLength == 1 { return nil }
        return .some(header.byteCount + Int(header.payloadLength))
    }

    /// Looks for the first provable boundary in `b`; `segmentEnds` are buffer offsets where
    /// a TCP segment ended (sorted; the buffer's end is one when it ends a segment).
    func find(in b: UnsafeRawBufferPointer, segmentEnds: [Int]) -> Result {
        var firstUndecided: Int?
        var start = 0
        while start < b.count - 1 {
            var cursor = start
            var frames = 0
            scan: while true {
                guard let length = frameLength(in: b, at: cursor) else { break scan }
                guard let length else { firstUndecided = firstUndecided ?? start; break scan }
                cursor += length
                frames += 1
                if cursor > b.count { firstUndecided = firstUndecided ?? start; break scan }
                if frames >= minFrames, segmentEnds.contains(cursor) { return .found(start) }
                if cursor == b.count { firstUndecided = firstUndecided ?? start; break scan }
            }
            start += 1
        }
        return .needMore(discardable: firstUndecided ?? max(0, b.count - 1))
    }
}
