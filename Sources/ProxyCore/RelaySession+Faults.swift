import Capture
import Faults
import Vocabulary
import WebSocket

/// Carrying out fault verdicts, timers, delayed frames, and the ends of TCP streams.
extension RelaySession {
    /// How long a fault's close waits for the peer's reply before closing the socket anyway.
    static let closeReplyTimeout: Micros = 2_000_000

    mutating func apply(_ outcomes: [FaultOutcome], now: Micros, into out: inout [RelayCommand]) {
        for outcome in outcomes {
            if let report = outcome.report {
                out.append(.record(.fault(FaultRecord(conn: conn, t: now, rule: outcome.rule, kind: outcome.kind,
                                                      target: outcome.target, detail: report))))
            }
            for effect in outcome.effects { carryOut(effect, rule: outcome.rule, now: now, into: &out) }
        }
    }

    mutating func carryOut(_ effect: FaultEffect, rule: String, now: Micros, into out: inout [RelayCommand]) {
        guard phase != .finished else { return }
        switch effect {
        case .drop:
            recordInjectedEnds(.fin, rule: rule, now: now, into: &out)
            finish(into: &out)
        case .reset:
            recordInjectedEnds(.rst, rule: rule, now: now, into: &out)
            phase = .finished
            resetSocket(.client, into: &out)
            resetSocket(.server, into: &out)
        case .resend(let target, let opcode, let payload):
            guard phase == .open else { return }
            var frame = Frame(opcode: opcode, payload: payload)
            if target == .server { frame.maskingKey = MaskingKey.random(using: &maskRandom) }
            let record = FrameRecord(conn: conn, t: now, from: target.other, opcode: opcode, masked: frame.isMasked,
                                     payload: payload, action: .injected, fault: rule)
            // Behind whatever is held back in that direction, so a copy never overtakes its original.
            enqueue(FrameEncoder.encode(frame), from: target.other, record: record, isClose: false, delay: 0,
                    now: now, into: &out)
        case .inject(let target, let payload):
            guard phase == .open else { return }
            var frame = Frame(opcode: .text, payload: payload)
            if target == .server { frame.maskingKey = MaskingKey.random(using: &maskRandom) }
            out.append(.send(to: target, bytes: FrameEncoder.encode(frame)))
            out.append(.record(.frame(FrameRecord(conn: conn, t: now, from: target.other, opcode: .text,
                                                  masked: frame.isMasked, payload: payload, action: .injected,
                                                  fault: rule))))
        case .close(let target, let code, let reason):
            guard phase == .open else { return }
            discardDelayed(towards: target, rule: rule, now: now, into: &out)
            sendFaultClose(to: target, code: code, reason: reason, rule: rule, now: now, into: &out)
            closeSocket(target.other, into: &out)
        case .refuseHTTP(let status):
            guard phase == .awaitingRequest else { return }
            answerUpgrade(status: status, body: "faultline: refused by fault rule \(rule)", now: now, into: &out)
            finishBeforeUpstream(into: &out)
        case .refuseUpgrade(let code, let reason):
            guard phase == .awaitingRequest, let request else { return }
            let response = WebSocketHandshake.response(accepting: request)
            out.append(.send(to: .client, bytes: response.serialized))
            out.append(.record(.upgrade(UpgradeRecord(conn: conn, t: now, from: .server, status: response.status,
                                                      reason: response.reason, headers: response.headers))))
            closedSockets.insert(.server)   // never opened
            sendFaultClose(to: .client, code: code, reason: reason, rule: rule, now: now, into: &out)
        }
    }

    /// A fault that ends both TCP streams is, to each peer, the other side's FIN or RST: record
    /// it that way, because the sockets are closed at once and no end will ever be read from
    /// them. Without these records a reader could not tell when the client learned of the drop.
    mutating func recordInjectedEnds(_ kind: EndKind, rule: String, now: Micros, into out: inout [RelayCommand]) {
        for target in [Side.client, .server] {
            recordProxyEnd(towards: target, kind: kind, detail: "sent by the proxy to the \(target.rawValue) (fault \(rule))",
                           into: &out)
        }
    }

    /// Sends a close frame as the other peer and waits (bounded) for the reply.
    mutating func sendFaultClose(to target: Side, code: UInt16, reason: String, rule: String, now: Micros,
                                 into out: inout [RelayCommand]) {
        var frame = Frame.close(code: code, reason: reason)
        if target == .server { frame.maskingKey = MaskingKey.random(using: &maskRandom) }
        out.append(.send(to: target, bytes: FrameEncoder.encode(frame)))
        out.append(.record(.frame(FrameRecord(conn: conn, t: now, from: target.other, opcode: .close,
                                              masked: frame.isMasked, payload: frame.payload, action: .injected,
                                              fault: rule))))
        phase = .faultClosing(target: target, deadline: now + Self.closeReplyTimeout, rule: rule)
    }

    /// Frames held back towards `target` will never be sent: recorded as dropped.
    mutating func discardDelayed(towards target: Side, rule: String, now: Micros, into out: inout [RelayCommand]) {
        for held in self[direction: target.other].delayed {
            guard var record = held.record else { continue }
            record.t = now
            record.action = .dropped
            record.fault = rule
            out.append(.record(.frame(record)))
        }
        self[direction: target.other].delayed = []
        self[direction: target.other].delayedBytes = 0
        updateDelayBackpressure(target.other, now: now, into: &out)
    }

    /// Backpressure for latency faults: past `maxDelayedBytes` held back from `side`, stop
    /// reading it (TCP then slows the sender down); resume once the queue is at half.
    mutating func updateDelayBackpressure(_ side: Side, now: Micros, into out: inout [RelayCommand]) {
        let held = self[direction: side].delayedBytes
        if !self[direction: side].pausedByDelay, held > config.maxDelayedBytes, phase != .finished {
            self[direction: side].pausedByDelay = true
            out.append(.pauseReading(side))
            if !self[direction: side].delayNoted {
                self[direction: side].delayNoted = true
                out.append(note(.info, "latency queue from the \(side.rawValue) holds \(held) bytes (over \(config.maxDelayedBytes)): "
                    + "not reading the \(side.rawValue) until it drains", now: now))
            }
        } else if self[direction: side].pausedByDelay, held <= config.maxDelayedBytes / 2 {
            self[direction: side].pausedByDelay = false
            out.append(.resumeReading(side))
        }
    }

    // MARK: Time

    mutating func timer(_ id: Int, now: Micros, into out: inout [RelayCommand]) {
        guard id == timerID else { return }   // superseded by a later `.schedule`
        scheduledAt = nil
        releaseDelayed(from: .client, now: now, into: &out)
        releaseDelayed(from: .server, now: now, into: &out)
        releaseExpiredIntercepts(now: now, into: &out)
        if isHandshaking, now >= handshakeDeadline { handshakeTimedOut(now: now, into: &out) }
        if case .faultClosing(let target, let deadline, _) = phase, now >= deadline {
            out.append(note(.info, "no close reply from the \(target.rawValue) within 2 s; closing", now: now))
            finish(into: &out)
        }
        if case .closingTCP(let deadline) = phase, now >= deadline { finish(into: &out) }
        if var faults, phase == .open {
            let outcomes = faults.tick(now: now)
            self.faults = faults
            apply(outcomes, now: now, into: &out)
        }
    }

    mutating func releaseDelayed(from side: Side, now: Micros, into out: inout [RelayCommand]) {
        while let first = self[direction: side].delayed.first, first.releaseAt <= now, phase != .finished {
            self[direction: side].delayed.removeFirst()
            self[direction: side].delayedBytes -= first.bytes.count
            if !first.bytes.isEmpty { out.append(.send(to: side.other, bytes: first.bytes)) }
            if var record = first.record {
                record.t = now
                if record.action == .forwarded { record.action = .delayed(now - first.receivedAt) }
                out.append(.record(.frame(record)))
            }
            if first.isClose { closeRelayed(from: side, into: &out) }
        }
        updateDelayBackpressure(side, now: now, into: &out)
        if self[direction: side].delayed.isEmpty, self[direction: side].shutdownAfterQueue, phase != .finished {
            self[direction: side].shutdownAfterQueue = false
            shutdownSocket(side.other, into: &out)
        }
    }

    /// Asks for one wake-up at the earliest time anything is due.
    mutating func reschedule(into out: inout [RelayCommand]) {
        guard phase != .finished else { return }
        var due: [Micros] = []
        if let first = client.delayed.first { due.append(first.releaseAt) }
        if let first = server.delayed.first { due.append(first.releaseAt) }
        if case .faultClosing(_, let deadline, _) = phase { due.append(deadline) }
        if case .closingTCP(let deadline) = phase { due.append(deadline) }
        if isHandshaking, handshakeDeadline != .max { due.append(handshakeDeadline) }
        if phase == .open, let wakeup = faults?.nextWakeup { due.append(wakeup) }
        if let deadline = interceptQueue.nextDeadline { due.append(deadline) }
        guard let earliest = due.min(), earliest != scheduledAt else { return }
        timerID += 1
        scheduledAt = earliest
        out.append(.schedule(id: timerID, at: earliest))
    }

    // MARK: TCP ends

    mutating func ended(_ side: Side, kind: EndKind, detail: String?, now: Micros, into out: inout [RelayCommand]) {
        recordEnd(EndRecord(conn: conn, t: now, side: side, kind: kind, detail: detail, leg: Leg(peer: side)), into: &out)
        if kind != .fin { hardEnded.insert(side) }
        self[direction: side].readEnded = true
        switch phase {
        case .finished:
            closeSocket(side, into: &out)
        case .awaitingRequest:
            out.append(probeNote("ended (\(kind.rawValue)) before sending a request", now: now))
            finishBeforeUpstream(into: &out)
        case .connecting, .awaitingResponse:
            if side == .server {
                out.append(note(.error, "upstream ended (\(kind.rawValue)) before answering the upgrade; answered 502", now: now))
                answerUpgrade(status: 502, body: "faultline: the upstream closed the connection before answering the upgrade",
                              now: now, into: &out)
            }
            if kind == .fin { finish(into: &out) } else { abort(after: side, into: &out) }
        case .relayingRefusal:
            if kind == .fin { finish(into: &out) } else { abort(after: side, into: &out) }
        case .faultClosing(let target, _, _):
            if side == target { finish(into: &out) }
        case .closingTCP:
            passOnAfterCloseHandshake(side, kind: kind, into: &out)
        case .plainTCP:
            plainEnded(side, kind: kind, now: now, into: &out)
        case .open:
            if var faults {
                let decision = faults.judgeEnd(from: side, now: now)
                self.faults = faults
                apply(decision.outcomes, now: now, into: &out)
                if kind == .fin, decision.delay > 0, !decision.dropped, !(client.readEnded && server.readEnded) {
                    // Held back: an entry with no bytes in the queue, then the FIN behind it.
                    let release = max(now + decision.delay, self[direction: side].delayed.last?.releaseAt ?? now)
                    self[direction: side].delayed.append(DelayedFrame(releaseAt: release, receivedAt: now, bytes: [],
                                                                      record: nil, isClose: false))
                    self[direction: side].shutdownAfterQueue = true
                    return
                }
                if decision.dropped {
                    out.append(note(.info, "\(side.rawValue)'s \(kind.rawValue) not passed on (fault \(decision.rule ?? ""))", now: now))
                    if kind != .fin { closeSocket(side, into: &out) }
                    if client.readEnded && server.readEnded { finish(into: &out) }
                    return
                }
            }
            guard kind == .fin else {
                abort(after: side, into: &out)
                return
            }
            if client.readEnded && server.readEnded {
                finish(into: &out)
            } else if self[direction: side].delayed.isEmpty {
                shutdownSocket(side.other, into: &out)
            } else {
                self[direction: side].shutdownAfterQueue = true
            }
        }
    }

    /// `side` was reset or failed: reset the other side too and end the pair.
    mutating func abort(after side: Side, into out: inout [RelayCommand]) {
        phase = .finished
        resetSocket(side.other, into: &out)
        closeSocket(side, into: &out)
    }
}
