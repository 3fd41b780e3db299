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

    /// Header length and total frame length at `offset`, or nil when the bytes there cannot
    /// be a frame header; `.some(nil)` when more bytes are needed to tell.
    func frameLength(in b: UnsafeRawBufferPointer, at offset: Int) -> Int?? {
        guard b.count - offset >= 2 else { return .some(nil) }
        let b0 = b[offset], b1 = b[offset + 1]
        let opcode = b0 & 0x0F
        let fin = b0 & 0x80 != 0
        if b0 & 0x30 != 0 { return nil }                       // rsv2, rsv3
        if b0 & 0x40 != 0, !rsv1Allowed || opcode > 2 { return nil }
        switch opcode {
        case 0, 1, 2: break
        case 8, 9, 10: if !fin { return nil }
        default: return nil
        }
        if (b1 & 0x80 != 0) != masked { return nil }
        var length = Int(b1 & 0x7F)
        var header = 2
        if opcode >= 8, length > 125 { return nil }
        if length == 126 {
            guard b.count - offset >= 4 else { return .some(nil) }
            length = Int(b.readBE16(offset + 2))
            if length < 126 { return nil }
            header = 4
        } else if length == 127 {
            guard b.count - offset >= 10 else { return .some(nil) }
            let long = b.readBE64(offset + 2)
            if long < 65536 || long > UInt64(maxPayload) { return nil }
            length = Int(long)
            header = 10
        }
        if length > maxPayload { return nil }
        if masked { header += 4 }
        if opcode == 8, length == 1 { return nil }
        return .some(header + length)
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
