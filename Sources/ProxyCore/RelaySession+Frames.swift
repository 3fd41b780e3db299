import Capture
import Faults
import Vocabulary
import WebSocket

/// The WebSocket part: frames one by one, both ways.
extension RelaySession {
    mutating func receiveFrames(from side: Side, _ bytes: [UInt8], now: Micros, into out: inout [RelayCommand]) {
        var offset = 0
        if self[direction: side].decoder.isAtFrameBoundary {
            // Whole frames straight from the read, as `append` then `next()` would return
            // them, without the copy through the decoder's buffer (a payload copy per frame
            // on the bulk path); only a partial tail, or a frame the one-step path declines,
            // goes through the decoder.
            let maxPayload = self[direction: side].decoder.maxPayload
            while phase == .open || isFaultClosing,
                  let (frame, consumed) = bytes.withUnsafeBufferPointer({
                      FrameDecoder.wholeFrame(at: UnsafeBufferPointer(rebasing: $0[offset...]), maxPayload: maxPayload)
                  }) {
                offset += consumed
                // The one-step path takes minimal lengths only.
                relay(frame, from: side, nonMinimalLength: false, now: now, into: &out)
            }
        }
        if offset < bytes.count { self[direction: side].decoder.append(bytes[offset...]) }
        while phase == .open || isFaultClosing {
            if self[direction: side].decoder.isPassingThrough {
                passThroughBytes(from: side, now: now, into: &out)
                if self[direction: side].decoder.isPassingThrough { return }
                continue
            }
            let frame: Frame?
            do {
                frame = try self[direction: side].decoder.next()
            } catch {
                failConnection(offender: side, code: error.closeCode.rawValue,
                               reason: "cannot relay: \(error.message)", now: now, into: &out)
                return
            }
            guard let frame else {
                guard mayPassThrough(side) else { return }
                beginPassThrough(from: side, now: now, into: &out)
                continue
            }
            relay(frame, from: side, nonMinimalLength: self[direction: side].decoder.lastFrameHadNonMinimalLength,
                  now: now, into: &out)
        }
    }

    var isFaultClosing: Bool {
        if case .faultClosing = phase { true } else { false }
    }

    /// `nonMinimalLength`: the frame's length was not in its minimal encoding (a protocol
    /// violation the relay cannot pass on, since it re-encodes every frame).
    mutating func relay(_ frame: Frame, from side: Side, nonMinimalLength: Bool, now: Micros, into out: inout [RelayCommand]) {
        var violation = self[direction: side].validator.validate(frame)
        if violation == nil, nonMinimalLength {
            // Frames are re-encoded on the way out, so this one leaves with the minimal encoding.
            violation = WebSocketError(.nonMinimalLength, "payload length not in its minimal encoding (relayed re-encoded)",
                                       closeCode: .protocolError)
        }
        var record = FrameRecord(conn: conn, t: now, from: side, opcode: frame.opcode, fin: frame.fin,
                                 rsv1: frame.rsv1, rsv2: frame.rsv2, rsv3: frame.rsv3, masked: frame.isMasked,
                                 length: frame.payload.count, payload: frame.payload,
                                 protocolError: violation?.message)
        inflateIfCompressed(frame, into: &record, now: now, out: &out)

        if case .faultClosing(let target, _, let rule) = phase {
            // The fault already ended this conversation: nothing more is relayed.
            record.action = .dropped
            record.fault = rule
            out.append(.record(.frame(record)))
            if side == target, frame.opcode == .close { finish(into: &out) }
            return
        }
        if let violation, config.strict {
            record.action = .dropped
            out.append(.record(.frame(record)))
            failConnection(offender: side, code: violation.closeCode.rawValue,
                           reason: violation.message, now: now, into: &out)
            return
        }

        // Event names are decoded only when a fault may care (`on=`, pong and handshake faults).
        let event = frame.opcode == .text && frame.fin && faults?.wantsEventNames == true
            ? BirdEvent.name(of: record.payload) : nil
        var decision = FrameDecision.untouched
        if var faults {
            decision = faults.judge(FaultFrame(from: side, opcode: frame.opcode, payload: record.payload,
                                               compressed: record.compressed, event: event), now: now)
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
                record.length = rewritten.count
                record.action = .injected
                record.fault = decision.rule
            }
            // A delayed frame names the latency rule that held it, as dropped ones do.
            if decision.delay > 0, record.fault == nil { record.fault = decision.rule }
            if decision.fragments != nil || decision.slices != nil {
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
        if client.closeRelayed && server.closeRelayed { finish(into: &out) }
    }

    /// Records compressed messages inflated (RFC 7692); a failure is noted and the raw
    /// payload recorded, and the relay goes on untouched either way.
    mutating func inflateIfCompressed(_ frame: Frame, into record: inout FrameRecord, now: Micros,
                                      out: inout [RelayCommand]) {
        let side = record.from
        guard !frame.opcode.isControl, let inflater = self[direction: side].inflater else { return }
        let message: [UInt8]
        switch self[direction: side].message.add(opcode: frame.opcode, rsv1: frame.rsv1, fin: frame.fin, payload: frame.payload) {
        case .notCompressed:
            return
        case .tooLarge:
            // Its window is lost with it: later messages could not be inflated either.
            self[direction: side].inflater = nil
            out.append(note(.warning, "compressed message from the \(side.rawValue) over \(config.maxPayload) bytes: recorded as sent, inflation off for this direction", now: now))
            return
        case .partial:
            record.compressed = true
            record.payload = []   // the whole message is recorded inflated on its last frame
            return
        case .complete(let whole):
            message = whole
        }
        record.compressed = true
        do {
            record.payload = try inflater.inflate(message, maxOutput: config.maxPayload)
        } catch {
            record.compressed = false
            self[direction: side].inflater = nil
            out.append(note(.warning, "could not inflate a compressed message from the \(side.rawValue): \(error); recorded as sent, inflation off for this direction", now: now))
        }
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
