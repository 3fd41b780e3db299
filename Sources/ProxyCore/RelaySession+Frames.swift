import Capture
import Faults
import Vocabulary
import WebSocket

/// The WebSocket part: frames one by one, both ways.
extension RelaySession {
    mutating func receiveFrames(from side: Side, _ bytes: [UInt8], now: Micros, into out: inout [RelayCommand]) {
        self[direction: side].recorder.append(bytes)
        var notes: [NoteRecord] = []
        while phase == .open || isFaultClosing {
            if self[direction: side].recorder.decoder.isPassingThrough {
                passThroughBytes(from: side, now: now, into: &out)
                if self[direction: side].recorder.decoder.isPassingThrough { return }
                continue
            }
            let next: FrameRecorder.Recorded?
            do {
                next = try self[direction: side].recorder.next(conn: conn, t: now, action: .forwarded, subject: side.rawValue,
                                                               notes: &notes)
            } catch {
                failConnection(offender: side, code: error.closeCode.rawValue,
                               reason: "cannot relay: \(error.message)", now: now, into: &out)
                return
            }
            if !notes.isEmpty {
                for note in notes { out.append(.record(.note(note))) }
                notes.removeAll()
            }
            guard let next else {
                guard mayPassThrough(side, now: now, into: &out) else { return }
                beginPassThrough(from: side, now: now, into: &out)
                continue
            }
            relay(next, from: side, now: now, into: &out)
            // A large frame gathered for a fault is out: its share of the budget goes back.
            self[direction: side].gathering = nil
        }
    }

    var isFaultClosing: Bool {
        if case .faultClosing = phase { true } else { false }
    }

    /// `record` is the recorder's: the frame's verdict and its (inflated) payload. A frame
    /// whose length was not in its minimal encoding leaves re-encoded, minimal.
    mutating func relay(_ recorded: FrameRecorder.Recorded, from side: Side, now: Micros, into out: inout [RelayCommand]) {
        let frame = recorded.frame
        var record = recorded.record

        if case .faultClosing(let target, _, let rule) = phase {
            // The fault already ended this conversation: nothing more is relayed.
            record.action = .dropped
            record.fault = rule
            out.append(.record(.frame(record)))
            if side == target, frame.opcode == .close { finish(into: &out) }
            return
        }
        if let violation = recorded.violation, config.strict {
            record.action = .dropped
            out.append(.record(.frame(record)))
            failConnection(offender: side, code: violation.closeCode.rawValue,
                           reason: violation.message, now: now, into: &out)
            return
        }

        // The event, decoded once: the record carries it to the faults (`on=`, pong and
        // handshake faults), the live view and the live analysis.
        record.decoded = decodeEvent(of: record)
        let event = record.decoded.event
        var decision = FrameDecision.untouched
        if var faults {
            decision = faults.judge(FaultFrame(from: side, opcode: frame.opcode, payload: record.payload,
                                               compressed: record.compressed, event: event), wire: wire, now: now)
            self.faults = faults
        }
        if decision.dropped {
            record.action = .dropped
            record.fault = decision.rule
            out.append(.record(.frame(record)))
        } else {
            var outgoing = frame
            if let rewritten = decision.rewritten {
                var original = record
                original.action = .dropped
                original.fault = decision.rule
                out.append(.record(.frame(original)))
                outgoing.payload = rewritten
                record.payload = rewritten
                record.decoded = .notDecoded  // decoded again on the way out (`decodeEvents`)
                record.length = rewritten.count
                record.action = .injected
                record.fault = decision.rule
            }
            // A delayed frame names the latency rule that held it, as dropped ones do.
            if decision.delay > 0, record.fault == nil { record.fault = decision.rule }
            if frame.opcode == .close { releaseHeldBeforeClose(from: side, now: now, into: &out) }
            if decision.delay == 0, decision.fragments == nil, decision.slices == nil, interceptPause != nil,
               interceptHolds(outgoing, record: record, from: side, now: now, into: &out) {
                // Held for the operator (`RelaySession+Intercept`): relayed, edited or dropped later.
            } else if decision.fragments != nil || decision.slices != nil {
                sendShaped(outgoing, from: side, record: record, decision: decision, now: now, into: &out)
            } else {
                send(outgoing, from: side, record: record, delay: decision.delay, now: now, into: &out)
            }
        }
        apply(decision.outcomes, now: now, into: &out)
        if var faults, phase == .open {
            let outcomes = faults.frameSeen(event: event, now: now)
            self.faults = faults
            apply(outcomes, now: now, into: &out)
        }
    }

    /// Sends a frame to the side that did not send it, now or after `delay` (behind any
    /// frame already held back in that direction, so order is kept).
    mutating func send(_ frame: Frame, from side: Side, record: FrameRecord, delay: Micros, now: Micros,
                       into out: inout [RelayCommand]) {
        var frame = frame
        if side == .client { frame.maskingKey = MaskingKey.random(using: &maskRandom) }
        enqueue(FrameEncoder.encode(frame), from: side, record: record, isClose: frame.opcode == .close,
                delay: delay, now: now, into: &out)
    }

    /// Sends bytes from `side` to the other side now, or at `now + delay` behind whatever is
    /// held back in that direction; `record` is written when they go (none for a piece).
    mutating func enqueue(_ bytes: [UInt8], from side: Side, record: FrameRecord?, isClose: Bool, delay: Micros,
                          now: Micros, into out: inout [RelayCommand]) {
        if delay > 0 || !self[direction: side].delayed.isEmpty {
            let release = max(now + delay, self[direction: side].delayed.last?.releaseAt ?? now)
            self[direction: side].delayed.append(DelayedFrame(releaseAt: release, receivedAt: now, bytes: bytes,
                                                              record: record, isClose: isClose))
            self[direction: side].delayedBytes += bytes.count
            updateDelayBackpressure(side, now: now, into: &out)
            return
        }
        if !bytes.isEmpty { out.append(.send(to: side.other, bytes: bytes)) }
        if let record { out.append(.record(.frame(record))) }
        if isClose { closeRelayed(from: side, into: &out) }
    }

    /// A close frame went through; once both have, the handshake is over and both sockets close.
    mutating func closeRelayed(from side: Side, into out: inout [RelayCommand]) {
        self[direction: side].closeRelayed = true
        if client.closeRelayed && server.closeRelayed { closeHandshakeCompleted(into: &out) }
    }

    /// Ends the pair because of `offender`: a close frame with `code` to it, FIN to the other.
    mutating func failConnection(offender: Side, code: UInt16, reason: String, now: Micros,
                                 into out: inout [RelayCommand]) {
        let shortReason = Self.truncated(reason, toUTF8Bytes: 123)
        var close = Frame.close(code: code, reason: shortReason)
        if offender == .server { close.maskingKey = MaskingKey.random(using: &maskRandom) }
        out.append(note(.error, "\(offender.rawValue) \(reason); closing with \(code)", now: now))
        out.append(.send(to: offender, bytes: FrameEncoder.encode(close)))
        out.append(.record(.frame(FrameRecord(conn: conn, t: now, from: offender.other, opcode: .close,
                                              masked: close.isMasked, payload: close.payload, action: .injected))))
        finish(into: &out)
    }

    /// `text` cut to at most `limit` UTF-8 bytes without splitting a character (close
    /// reasons must fit a 125-byte control frame with their code).
    static func truncated(_ text: String, toUTF8Bytes limit: Int) -> String {
        guard text.utf8.count > limit else { return text }
        var result = ""
        var used = 0
        for scalar in text.unicodeScalars {
            let size = String(scalar).utf8.count
            guard used + size <= limit else { break }
            used += size
            result.unicodeScalars.append(scalar)
        }
        return result
    }
}
