import Capture
import Faults
import Vocabulary
import WebSocket

/// Frames sent in another shape than they came: a message cut into continuation frames
/// (`fragment:N`) and frames written in small pieces with gaps (`slicer`).
extension RelaySession {
    /// Sends `frame` from `side` as the decision shapes it. Fragments are recorded one by
    /// one (as injected, the original as dropped), since that is what the peer receives; a
    /// sliced frame is recorded once, when its last piece is written.
    mutating func sendShaped(_ frame: Frame, from side: Side, record: FrameRecord, decision: FrameDecision,
                             now: Micros, into out: inout [RelayCommand]) {
        var frames = [(frame, record)]
        if let count = decision.fragments, frame.fin, !frame.rsv1, frame.payload.count > 1,
           frame.opcode == .text || frame.opcode == .binary {
            if record.action == .forwarded {
                var original = record
                original.action = .dropped
                original.fault = decision.rule
                out.append(.record(.frame(original)))
            }
            frames = Self.fragments(of: frame, count: count).map { part in
                (part, FrameRecord(conn: conn, t: now, from: side, opcode: part.opcode, fin: part.fin,
                                   masked: side == .client, payload: part.payload, action: .injected,
                                   fault: decision.rule))
            }
        }
        for (part, partRecord) in frames {
            var part = part
            if side == .client { part.maskingKey = MaskingKey.random(using: &maskRandom) }
            let bytes = FrameEncoder.encode(part)
            guard let slices = decision.slices else {
                enqueue(bytes, from: side, record: partRecord, isClose: part.opcode == .close,
                        delay: decision.delay, now: now, into: &out)
                continue
            }
            // The first piece goes after the fault's delay (if any), each next one a gap later.
            let pieces = Self.cut(bytes, sizes: slices.pieces)
            var delay = decision.delay
            for (index, piece) in pieces.enumerated() {
                let last = index == pieces.count - 1
                enqueue(piece, from: side, record: last ? partRecord : nil, isClose: last && part.opcode == .close,
                        delay: delay, now: now, into: &out)
                delay = delay.addingReportingOverflow(slices.gap).overflow ? delay : delay + slices.gap
            }
        }
    }

    /// `frame`'s payload in `count` frames (fewer when the payload is shorter): the first
    /// with its opcode, the rest continuations, FIN on the last only.
    static func fragments(of frame: Frame, count: Int) -> [Frame] {
        let n = max(1, min(count, frame.payload.count))
        let size = frame.payload.count / n
        var parts: [Frame] = []
        var start = 0
        for index in 0..<n {
            let end = index == n - 1 ? frame.payload.count : start + size
            parts.append(Frame(fin: index == n - 1, opcode: index == 0 ? frame.opcode : .continuation,
                               payload: Array(frame.payload[start..<end])))
            start = end
        }
        return parts
    }

    /// `bytes` cut at `sizes` in order; the last piece takes what is left.
    static func cut(_ bytes: [UInt8], sizes: [Int]) -> [[UInt8]] {
        var pieces: [[UInt8]] = []
        var start = 0
        for size in sizes where start < bytes.count {
            let end = min(bytes.count, start + max(1, size))
            pieces.append(Array(bytes[start..<end]))
            start = end
        }
        if start < bytes.count {
            if pieces.isEmpty { pieces.append([]) }
            pieces[pieces.count - 1] += bytes[start...]
        }
        return pieces
    }
}
