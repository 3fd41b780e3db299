import Capture
import Vocabulary
import WebSocket

/// Large frames relayed as their bytes arrive (`RelayConfig.passThroughAbove`): once a
/// frame's header says its payload is larger than that, the header goes out at once and the
/// payload follows piece by piece (client frames re-masked with a fresh key), so a pair holds
/// a bounded part of it however large it is, instead of up to `maxPayload` per connection.
/// The frame's record is written when its last byte has passed, with a bounded prefix of the
/// payload, its full length and the SHA-256 of the whole payload (`FrameRecord.sha256`).
///
/// Only plain relaying streams: with fault rules installed (they may drop, rewrite or delay
/// a frame, which needs it whole), behind frames a latency fault holds back, or while a
/// fault's close is in progress, the frame is gathered whole as before (up to `maxPayload`).
struct PassThroughFrame {
    /// The frame's record so far: header fields, full length, the payload prefix.
    var record: FrameRecord
    /// The key client frames are re-masked with on the way out.
    var outgoingKey: MaskingKey?
    /// Payload bytes sent on so far.
    var offset: Int
    let digest: SHA256Digest
}

extension RelaySession {
    /// Whether the frame pending in `side`'s decoder may be passed through.
    func mayPassThrough(_ side: Side) -> Bool {
        guard phase == .open, self[direction: side].delayed.isEmpty,
              let length = self[direction: side].decoder.pendingFrameLength, length > config.passThroughAbove else { return false }
        if let engine, !engine.list().isEmpty { return false }
        return true
    }

    /// Sends the pending frame's header and what arrived of its payload; the rest follows in
    /// `passThroughBytes`.
    mutating func beginPassThrough(from side: Side, now: Micros, into out: inout [RelayCommand]) {
        guard let (frame, remaining) = self[direction: side].decoder.beginPassThrough() else { return }
        let length = frame.payload.count + remaining
        // Message rules (fragmentation, RSV bits, opcodes) are checked on the header; the
        // UTF-8 of a streamed text payload is not (it is never whole in memory).
        var header = frame
        header.payload = []
        let violation = self[direction: side].validator.validate(header)
        if self[direction: side].inflater != nil {
            // A compressed message that is never whole cannot be inflated, and the shared
            // LZ77 window is lost with it.
            self[direction: side].inflater = nil
            out.append(note(.info, "a \(length)-byte frame from the \(side.rawValue) was passed through without being kept whole: inflation off for this direction", now: now))
        }
        var outgoing = header
        outgoing.maskingKey = side == .client ? MaskingKey.random(using: &maskRandom) : nil
        out.append(.send(to: side.other, bytes: FrameEncoder.header(of: outgoing, payloadLength: length)))
        var record = FrameRecord(conn: conn, t: now, from: side, opcode: frame.opcode, fin: frame.fin,
                                 rsv1: frame.rsv1, rsv2: frame.rsv2, rsv3: frame.rsv3, masked: frame.isMasked,
                                 length: length, payload: [], protocolError: violation?.message)
        record.sha256 = ""
        self[direction: side].passThrough = PassThroughFrame(record: record, outgoingKey: outgoing.maskingKey, offset: 0,
                                                             digest: SHA256Digest())
        forward(frame.payload, from: side, now: now, into: &out)
        if remaining == 0 { endPassThrough(from: side, now: now, into: &out) }
    }

    /// Passes on every payload byte the decoder holds for the frame in progress.
    mutating func passThroughBytes(from side: Side, now: Micros, into out: inout [RelayCommand]) {
        while let chunk = self[direction: side].decoder.nextPassThroughBytes() {
            forward(chunk, from: side, now: now, into: &out)
            if !self[direction: side].decoder.isPassingThrough {
                endPassThrough(from: side, now: now, into: &out)
                return
            }
        }
    }

    private mutating func forward(_ chunk: [UInt8], from side: Side, now: Micros, into out: inout [RelayCommand]) {
        guard !chunk.isEmpty, var state = self[direction: side].passThrough else { return }
        state.digest.update(chunk)
        let room = config.passThroughRecordPrefix - state.record.payload.count
        if room > 0 { state.record.payload += chunk.prefix(room) }
        var outgoing = chunk
        if let key = state.outgoingKey { applyMask(key, to: &outgoing, offset: state.offset) }
        state.offset += chunk.count
        self[direction: side].passThrough = state
        if phase == .open { out.append(.send(to: side.other, bytes: outgoing)) }
    }

    private mutating func endPassThrough(from side: Side, now: Micros, into out: inout [RelayCommand]) {
        guard var state = self[direction: side].passThrough else { return }
        self[direction: side].passThrough = nil
        state.record.sha256 = state.digest.finish()
        state.record.t = now
        if phase != .open { state.record.action = .dropped }
        out.append(.record(.frame(state.record)))
    }
}
