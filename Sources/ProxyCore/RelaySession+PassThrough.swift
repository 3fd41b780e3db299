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
/// A frame is gathered whole instead only when an armed fault of the connection says, from
/// the frame's header, that it needs the whole payload (`Fault.needsWholeFrame`: to drop,
/// rewrite, delay or split it), and then only within the `LargeFrameBudget` shared by all
/// connections; past the budget the frame streams through and a note says the fault could
/// not act on it. Behind frames a latency fault holds back, the streamed pieces queue up
/// behind them (the queue's backpressure bounds them). While a fault's close is in
/// progress, frames are gathered whole as before (up to `maxPayload`) and dropped.
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
    /// Whether the frame pending in `side`'s decoder is passed through as it arrives, rather
    /// than gathered whole (see the type's comment); asked each time a read leaves it pending.
    mutating func mayPassThrough(_ side: Side, now: Micros, into out: inout [RelayCommand]) -> Bool {
        guard phase == .open, self[direction: side].gathering == nil,
              let length = self[direction: side].recorder.decoder.pendingFrameLength, length > config.passThroughAbove,
              let opcode = self[direction: side].recorder.decoder.pendingOpcode else { return false }
        guard let faults, faults.needsWholeFrame(from: side, opcode: opcode) else { return true }
        let budget = config.largeFrameBudget
        if let reservation = budget.reserve(length) {
            self[direction: side].gathering = reservation
            return false
        }
        out.append(note(.warning, "fault rules could not be applied to a \(length)-byte frame from the \(side.rawValue): "
                        + "the large-frame budget (\(budget.limit) bytes, shared by all connections) is in use; relayed as it came",
                        now: now))
        return true
    }

    /// Sends the pending frame's header and what arrived of its payload; the rest follows in
    /// `passThroughBytes`.
    mutating func beginPassThrough(from side: Side, now: Micros, into out: inout [RelayCommand]) {
        guard let (frame, remaining) = self[direction: side].recorder.decoder.beginPassThrough() else { return }
        let length = frame.payload.count + remaining
        // Message rules (fragmentation, RSV bits, opcodes) are checked on the header; the
        // UTF-8 of a streamed text payload is not (it is never whole in memory).
        var header = frame
        header.payload = []
        // A compressed message that is never whole cannot be inflated (the recorder notes it).
        var notes: [NoteRecord] = []
        let violation = self[direction: side].recorder.passingThrough(header, length: length, conn: conn, t: now,
                                                                       subject: side.rawValue, notes: &notes)
        for note in notes { out.append(.record(.note(note))) }
        var outgoing = header
        outgoing.maskingKey = side == .client ? MaskingKey.random(using: &maskRandom) : nil
        enqueue(FrameEncoder.header(of: outgoing, payloadLength: length), from: side, record: nil, isClose: false, delay: 0,
                now: now, into: &out)
        var record = FrameRecord(conn: conn, t: now, from: side, opcode: frame.opcode, fin: frame.fin,
                                 rsv1: frame.rsv1, rsv2: frame.rsv2, rsv3: frame.rsv3, masked: frame.isMasked,
                                 length: length, payload: [], protocolError: violation)
        record.sha256 = ""
        self[direction: side].passThrough = PassThroughFrame(record: record, outgoingKey: outgoing.maskingKey, offset: 0,
                                                             digest: SHA256Digest())
        forward(frame.payload, from: side, now: now, into: &out)
        if remaining == 0 { endPassThrough(from: side, now: now, into: &out) }
    }

    /// Passes on every payload byte the decoder holds for the frame in progress.
    mutating func passThroughBytes(from side: Side, now: Micros, into out: inout [RelayCommand]) {
        while let chunk = self[direction: side].recorder.decoder.nextPassThroughBytes() {
            forward(chunk, from: side, now: now, into: &out)
            if !self[direction: side].recorder.decoder.isPassingThrough {
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
        // Behind any frame a latency fault holds back, so order is kept.
        if phase == .open { enqueue(outgoing, from: side, record: nil, isClose: false, delay: 0, now: now, into: &out) }
    }

    private mutating func endPassThrough(from side: Side, now: Micros, into out: inout [RelayCommand]) {
        guard var state = self[direction: side].passThrough else { return }
        self[direction: side].passThrough = nil
        state.record.sha256 = state.digest.finish()
        state.record.t = now
        guard phase == .open else {
            state.record.action = .dropped
            out.append(.record(.frame(state.record)))
            return
        }
        // The record goes when the last piece does; the frame counts for `frames=` triggers.
        enqueue([], from: side, record: state.record, isClose: false, delay: 0, now: now, into: &out)
        if var faults {
            let outcomes = faults.frameSeen(event: nil, now: now)
            self.faults = faults
            apply(outcomes, now: now, into: &out)
        }
    }
}
