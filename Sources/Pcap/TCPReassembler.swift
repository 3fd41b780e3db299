import Capture
import Vocabulary

/// Receives one direction's reassembled byte stream. `t` is the time of the packet that
/// made the bytes available (for out-of-order data: the packet that filled the hole).
public protocol TCPStreamSink {
    /// In-order bytes; the buffer is only valid during the call.
    mutating func streamData(_ bytes: UnsafeRawBufferPointer, t: Micros)
    /// `count` bytes will never be delivered (lost from the capture, cut by the snapshot
    /// length, or given up on at a memory limit). The stream goes on after them.
    mutating func streamGap(count: Int64, reason: TCPGapReason, t: Micros)
    /// A retransmission or overlap carried different bytes than the first copy (which won).
    mutating func streamConflict(offset: Int64, count: Int, t: Micros)
    /// The stream ended with FIN (after all its data) or RST.
    mutating func streamEnd(_ kind: EndKind, t: Micros)
}

public enum TCPGapReason: String, Sendable {
    /// The peer acknowledged bytes the capture never saw.
    case lost = "bytes missing from the capture"
    /// The snapshot length cut the packet.
    case truncated = "bytes cut by the snapshot length"
    /// Out-of-order data waited too long for the bytes before it (memory limit).
    case limit = "out-of-order buffer limit reached"
    /// The stream ended (FIN, RST, end of capture) with a hole still open.
    case ended = "hole left when the stream ended"
}

/// TCP reassembly for one direction of one connection: pure, tested without libpcap.
///
/// Sequence numbers are turned into 64-bit stream offsets relative to the next expected
/// byte, so wrap-around at 2^32 needs no special case. Out-of-order data is kept trimmed to
/// what is new (the first copy of any byte wins; a later copy with other bytes is reported),
/// and delivered bytes the peer has not yet acknowledged (at most `historySize` of them) are
/// kept to check retransmissions.
public struct TCPReassembler: ~Copyable {
    public struct Limits: Sendable {
        /// Out-of-order bytes held per direction before the hole is declared lost.
        public var maxBufferedBytes: Int = 4 << 20
        /// Out-of-order segments held per direction.
        public var maxBufferedSegments: Int = 4096
        /// Delivered bytes remembered (in a ring) to compare retransmissions against, until
        /// the peer acknowledges them.
        public var historySize: Int = 16 << 10
        public init() {}
    }

    enum State {
        /// Nothing seen yet.
        case idle
        /// Bytes flowing; `nextSeq` is the sequence number of stream offset `nextOffset`.
        case open
        /// FIN delivered or RST seen: later segments are ignored.
        case ended
    }

    struct Pending {
        var start: Int64
        var bytes: [UInt8]
        /// Bytes after `bytes` known to be lost (a truncated segment's cut tail).
        var missing: Int
        var end: Int64 { start + Int64(bytes.count + missing) }
    }

    public let limits: Limits
    private(set) var state = State.idle
    private var nextSeq: UInt32 = 0
    /// Offset of the next byte to deliver.
    public private(set) var nextOffset: Int64 = 0
    /// True when the stream's start (its SYN) was not in the capture.
    public private(set) var startedMidStream = false
    private var pending: [Pending] = []
    private var pendingBytes = 0
    private var finOffset: Int64?
    /// Highest offset the other side acknowledged.
    private var peerAcked: Int64 = .min
    /// The history ring, allocated on first use, and its size. A raw allocation owned by
    /// this (non-copyable) value rather than an array: writing into an array first reads
    /// its header (count and reference count), a cold cache line per packet with
    /// thousands of connections open; the pointer and size sit here with the rest of the
    /// direction's state, so remembering bytes is only stores.
    private var ring: UnsafeMutableRawPointer?
    private var ringSize = 0

    public init(limits: Limits = Limits()) {
        self.limits = limits
    }

    deinit { ring?.deallocate() }

    public var isEnded: Bool { if case .ended = state { true } else { false } }
    public var hasStarted: Bool { if case .idle = state { false } else { true } }

    @inline(__always) private func offset(of seq: UInt32) -> Int64 {
        nextOffset + Int64(Int32(bitPattern: seq &- nextSeq))
    }

    /// Feeds one segment of this direction.
    public mutating func receive<S: TCPStreamSink>(_ segment: TCPSegment, t: Micros, into sink: inout S) {
        let flags = segment.flags
        switch state {
        case .ended:
            return
        case .idle:
            if flags.contains(.syn) {
                nextSeq = segment.seq &+ 1
            } else if flags.contains(.rst) {
                state = .ended
                sink.streamEnd(.rst, t: t)
                return
            } else {
                nextSeq = segment.seq
                startedMidStream = true
            }
            state = .open
        case .open:
            break
        }
        let dataSeq = flags.contains(.syn) ? segment.seq &+ 1 : segment.seq
        let start = offset(of: dataSeq)
        let length = Int64(segment.payload.count + segment.missing)
        if length > 0 {
            accept(start: start, payload: segment.payload, missing: segment.missing, t: t, sink: &sink)
        }
        if flags.contains(.fin), finOffset == nil {
            finOffset = start + length
        }
        if flags.contains(.rst) {
            flushPending(upTo: .max, reason: .ended, t: t, sink: &sink)
            state = .ended
            sink.streamEnd(.rst, t: t)
            return
        }
        if pendingBytes > limits.maxBufferedBytes || pending.count > limits.maxBufferedSegments {
            flushPending(upTo: pending[0].start, reason: .limit, t: t, sink: &sink)
        }
        checkFin(t: t, sink: &sink)
    }

    /// The other direction acknowledged up to `ack`: bytes before it that the capture never
    /// showed are lost, and waiting for them would only stall the stream.
    public mutating func peerAcknowledged<S: TCPStreamSink>(_ ack: UInt32, t: Micros, into sink: inout S) {
        guard case .open = state else { return }
        let acked = offset(of: ack)
        guard acked > peerAcked else { return }
        peerAcked = acked
        forgetAcknowledged(upTo: acked)
        // The FIN takes one sequence number; an ack past it proves every byte was sent.
        let limit = min(acked, finOffset ?? .max)
        if !pending.isEmpty, limit > nextOffset {
            flushPending(upTo: limit, reason: .lost, t: t, sink: &sink)
            checkFin(t: t, sink: &sink)
        }
    }

    /// The capture ended: deliver what can be, report holes, and the FIN if it was seen.
    public mutating func finish<S: TCPStreamSink>(t: Micros, into sink: inout S) {
        guard case .open = state else { return }
        flushPending(upTo: .max, reason: .ended, t: t, sink: &sink)
        checkFin(t: t, sink: &sink)
    }

    private mutating func checkFin<S: TCPStreamSink>(t: Micros, sink: inout S) {
        guard let fin = finOffset, case .open = state else { return }
        if nextOffset >= fin {
            state = .ended
            pending.removeAll()
            pendingBytes = 0
            sink.streamEnd(.fin, t: t)
        } else if pending.isEmpty, peerAcked > fin {
            // Every byte before the FIN was acknowledged but not all were captured.
            sink.streamGap(count: fin - nextOffset, reason: .lost, t: t)
            nextOffset = fin
            state = .ended
            sink.streamEnd(.fin, t: t)
        }
    }

    private mutating func accept<S: TCPStreamSink>(start: Int64, payload: UnsafeRawBufferPointer, missing: Int,
                                                   t: Micros, sink: inout S) {
        let capturedEnd = start + Int64(payload.count)
        let end = capturedEnd + Int64(missing)
        if end <= nextOffset {
            compareWithHistory(start: start, payload, t: t, sink: &sink)
            return
        }
        if start > nextOffset {
            buffer(start: start, payload: payload, missing: missing, t: t, sink: &sink)
            return
        }
        // start <= nextOffset < end: the new part starts inside this segment.
        if start < nextOffset {
            let overlap = Int(min(nextOffset, capturedEnd) - start)
            compareWithHistory(start: start, UnsafeRawBufferPointer(rebasing: payload[0..<overlap]), t: t, sink: &sink)
        }
        if nextOffset < capturedEnd {
            deliver(UnsafeRawBufferPointer(rebasing: payload[Int(nextOffset - start)...]), t: t, sink: &sink)
        }
        if end > nextOffset {
            sink.streamGap(count: end - nextOffset, reason: .truncated, t: t)
            advance(to: end)
        }
        drain(t: t, sink: &sink)
    }

    /// Delivers in-order bytes and remembers them for retransmission checks.
    private mutating func deliver<S: TCPStreamSink>(_ bytes: UnsafeRawBufferPointer, t: Micros, sink: inout S) {
        guard !bytes.isEmpty else { return }
        remember(bytes)
        nextOffset += Int64(bytes.count)
        nextSeq = nextSeq &+ UInt32(truncatingIfNeeded: bytes.count)
        sink.streamData(bytes, t: t)
    }

    /// Skips lost bytes without delivering them.
    private mutating func advance(to offset: Int64) {
        let count = offset - nextOffset
        nextSeq = nextSeq &+ UInt32(truncatingIfNeeded: count)
        nextOffset = offset
        // The history no longer lines up with the stream: start it again.
        historyStart = offset
        historyEnd = offset
    }

    // MARK: - Retransmission history

    /// The remembered bytes are the stream offsets `historyStart..<historyEnd`, offset `o` at
    /// `(o - historyOrigin) % ringSize` in `ring`.
    ///
    /// Only bytes the peer has not acknowledged are kept. The receiver discards a later copy
    /// of bytes it acknowledged, so what such a copy carries never reaches the application;
    /// and a ring that empties on every acknowledgement starts again at its first byte, so
    /// with thousands of connections open its writes stay in a few warm cache lines instead
    /// of sweeping 16 KiB per direction (a third of the decoding time on the benchmark pcap).
    private var historyStart: Int64 = 0
    private var historyEnd: Int64 = 0
    private var historyOrigin: Int64 = 0

    @inline(__always) private func ringIndex(of offset: Int64, size: Int) -> Int {
        Int((offset - historyOrigin) % Int64(size))
    }

    /// The peer acknowledged the stream up to `acked`: those bytes need no checking.
    private mutating func forgetAcknowledged(upTo acked: Int64) {
        if acked > historyStart { historyStart = min(acked, historyEnd) }
    }

    /// Copies delivered bytes (starting at `nextOffset`) into the ring: at most two memcpys.
    private mutating func remember(_ bytes: UnsafeRawBufferPointer) {
        let limit = limits.historySize
        guard limit > 0, !bytes.isEmpty else { return }
        if historyEnd != nextOffset || historyStart == historyEnd {
            // Empty (or out of line with the stream): start again at the ring's first byte.
            historyStart = nextOffset
            historyEnd = nextOffset
            historyOrigin = nextOffset
        }
        // The ring grows with the unacknowledged data up to `historySize`, so idle and
        // promptly acknowledged connections stay small.
        let wanted = min(limit, Int(historyEnd - historyStart) + bytes.count)
        if wanted > ringSize { growHistory(to: min(limit, max(wanted, 2 * ringSize, 256))) }
        guard let ring else { return }
        let size = ringSize
        var source = bytes
        var offset = nextOffset
        if source.count > size {
            offset += Int64(source.count - size)
            source = UnsafeRawBufferPointer(rebasing: source[(source.count - size)...])
        }
        let position = ringIndex(of: offset, size: size)
        let first = min(source.count, size - position)
        (ring + position).copyMemory(from: source.baseAddress!, byteCount: first)
        if first < source.count {
            ring.copyMemory(from: source.baseAddress! + first, byteCount: source.count - first)
        }
        historyEnd = nextOffset + Int64(bytes.count)
        historyStart = max(historyStart, historyEnd - Int64(size))
    }

    /// Moves the remembered bytes to the start of a bigger ring, in at most two memcpys.
    private mutating func growHistory(to capacity: Int) {
        // Uninitialized: only remembered offsets are ever read, and zero-filling every new
        // connection's ring showed up in profiles of captures with many connections.
        let larger = UnsafeMutableRawPointer.allocate(byteCount: capacity, alignment: 16)
        if let old = ring {
            var offset = historyStart
            while offset < historyEnd {
                let from = ringIndex(of: offset, size: ringSize), to = Int(offset - historyStart)
                let run = min(Int(historyEnd - offset), ringSize - from)
                (larger + to).copyMemory(from: old + from, byteCount: run)
                offset += Int64(run)
            }
            old.deallocate()
        }
        ring = larger
        ringSize = capacity
        historyOrigin = historyStart
    }

    private mutating func compareWithHistory<S: TCPStreamSink>(start: Int64, _ bytes: UnsafeRawBufferPointer,
                                                              t: Micros, sink: inout S) {
        let from = max(start, historyStart), to = min(start + Int64(bytes.count), historyEnd)
        guard from < to, let ring else { return }
        let size = ringSize
        var differing = 0
        var first: Int64 = -1
        for offset in from..<to where ring.load(fromByteOffset: ringIndex(of: offset, size: size), as: UInt8.self) != bytes[Int(offset - start)] {
            differing += 1
            if first < 0 { first = offset }
        }
        if differing > 0 { sink.streamConflict(offset: first, count: differing, t: t) }
    }

    // MARK: - Out-of-order buffer

    /// Keeps the parts of a segment no earlier copy covered, comparing the parts it did.
    private mutating func buffer<S: TCPStreamSink>(start: Int64, payload: UnsafeRawBufferPointer, missing: Int,
                                                   t: Micros, sink: inout S) {
        var cursor = start
        let capturedEnd = start + Int64(payload.count)
        let end = capturedEnd + Int64(missing)
        var index = pending.firstIndex { $0.end > start } ?? pending.endIndex
        var conflicts = 0
        var firstConflict: Int64 = -1
        while cursor < end {
            let nextStart = index < pending.endIndex ? pending[index].start : Int64.max
            if cursor < nextStart {
                // A hole in the buffered data: this segment fills it.
                let pieceEnd = min(end, nextStart)
                let capturedPieceEnd = min(pieceEnd, capturedEnd)
                let bytes = cursor < capturedPieceEnd
                    ? Array(UnsafeRawBufferPointer(rebasing: payload[Int(cursor - start) ..< Int(capturedPieceEnd - start)]))
                    : []
                let piece = Pending(start: cursor, bytes: bytes, missing: Int(pieceEnd - max(cursor, capturedPieceEnd)))
                pending.insert(piece, at: index)
                pendingBytes += bytes.count
                index += 1
                cursor = pieceEnd
            } else {
                // Covered by an earlier copy: it wins; compare the bytes both captured.
                let existing = pending[index]
                let overlapEnd = min(end, existing.end)
                let from = cursor, to = min(overlapEnd, capturedEnd, existing.start + Int64(existing.bytes.count))
                if from < to {
                    for offset in from..<to where existing.bytes[Int(offset - existing.start)] != payload[Int(offset - start)] {
                        conflicts += 1
                        if firstConflict < 0 { firstConflict = offset }
                    }
                }
                cursor = overlapEnd
                index += 1
            }
        }
        if conflicts > 0 { sink.streamConflict(offset: firstConflict, count: conflicts, t: t) }
    }

    /// Delivers buffered segments that have become in order.
    private mutating func drain<S: TCPStreamSink>(t: Micros, sink: inout S) {
        var consumed = 0
        while consumed < pending.count, pending[consumed].start <= nextOffset {
            let piece = pending[consumed]
            consumed += 1
            pendingBytes -= piece.bytes.count
            if piece.end <= nextOffset { continue }
            let skip = Int(nextOffset - piece.start)
            if skip < piece.bytes.count {
                piece.bytes.withUnsafeBytes { deliver(UnsafeRawBufferPointer(rebasing: $0[skip...]), t: t, sink: &sink) }
            }
            if piece.end > nextOffset {
                sink.streamGap(count: piece.end - nextOffset, reason: .truncated, t: t)
                advance(to: piece.end)
            }
        }
        if consumed > 0 { pending.removeFirst(consumed) }
    }

    /// Gives up on the hole before `limit` (or before every buffered segment for `.max`):
    /// reports it as a gap and delivers what follows.
    private mutating func flushPending<S: TCPStreamSink>(upTo limit: Int64, reason: TCPGapReason, t: Micros, sink: inout S) {
        while let first = pending.first, first.start <= limit || limit == .max {
            if first.start > nextOffset {
                sink.streamGap(count: first.start - nextOffset, reason: reason, t: t)
                advance(to: first.start)
            }
            drain(t: t, sink: &sink)
            if limit != .max, nextOffset >= limit { break }
        }
        if limit != .max, pending.first.map({ $0.start > limit }) ?? true, limit > nextOffset, reason == .lost {
            // Acknowledged bytes beyond everything buffered were lost too.
            sink.streamGap(count: limit - nextOffset, reason: reason, t: t)
            advance(to: limit)
        }
    }
}
