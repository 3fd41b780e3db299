import Capture
import Vocabulary
import WebSocket

/// The intercept: messages matching the connection's pause (`InterceptDesk`) are held in
/// `interceptQueue` instead of relayed, until the operator forwards, edits or drops each
/// one, the pause ends (what is held is forwarded), the sender closes (what it sent before
/// goes first), or the message's timeout comes (forwarded unchanged, with a note).
///
/// In the capture: a forwarded message is `delayed` by how long it was held, with fault
/// `intercept`; a dropped one is `dropped` with fault `intercept:drop`; an edited one is the
/// original as received, `dropped` with fault `intercept:edit`, then the edit as sent,
/// `injected` with fault `intercept:edit`; each operator decision also writes a `fault`
/// record of kind `intercept` saying what was done.
extension RelaySession {
    static let interceptRule = "intercept"
    static let interceptEditRule = "intercept:edit"
    static let interceptDropRule = "intercept:drop"

    /// Holds the message when the pause matches it; false when it is to be relayed now.
    mutating func interceptHolds(_ frame: Frame, record: FrameRecord, from side: Side, now: Micros,
                                 into out: inout [RelayCommand]) -> Bool {
        guard let pause = interceptPause, phase == .open,
              pause.holds(from: side, opcode: frame.opcode, fin: frame.fin, payload: record.payload) else { return false }
        interceptChanged = true
        guard let id = interceptQueue.hold(frame, record: record, now: now, timeout: pause.timeout) else {
            if interceptQueue.overflowed % 100 == 1 {
                out.append(note(.warning, "intercept: \(interceptQueue.held.count) messages (\(interceptQueue.heldBytes) bytes) are held "
                    + "already, the most one connection holds (\(InterceptQueue.maxMessages) messages, \(InterceptQueue.maxBytes) bytes); "
                    + "messages are relayed unheld until some are decided (\(interceptQueue.overflowed) so far)", now: now))
            }
            return false
        }
        out.append(note(.info, "intercept: held message \(id) from the \(side.rawValue) (\(record.payload.count) bytes) for the operator", now: now))
        return true
    }

    /// The desk changed (`.faultsChanged`): takes this connection's pause and decisions.
    mutating func interceptDeskChanged(now: Micros, into out: inout [RelayCommand]) {
        guard let desk = config.intercept else { return }
        interceptPause = desk.pause(for: conn)
        for (id, decision) in desk.takeDecisions(conn) {
            guard let message = interceptQueue.take(id) else { continue }
            interceptChanged = true
            release(message, decision, now: now, into: &out)
        }
        if interceptPause == nil, !interceptQueue.isEmpty {
            out.append(note(.info, "intercept: the pause ended; \(interceptQueue.held.count) held messages forwarded", now: now))
            releaseHeld(interceptQueue.held.map(\.id), now: now, into: &out)
        }
    }

    /// At the timer: messages held past their timeout go on unchanged.
    mutating func releaseExpiredIntercepts(now: Micros, into out: inout [RelayCommand]) {
        guard let due = interceptQueue.nextDeadline, due <= now else { return }
        for message in interceptQueue.takeExpired(now: now) {
            interceptChanged = true
            out.append(note(.warning, "intercept: held message \(message.id) from the \(message.record.from.rawValue) forwarded unchanged "
                + "after \(Self.secondsText(message.deadline - message.heldAt)) undecided (the pause's timeout)", now: now))
            release(message, .forward, now: now, into: &out)
        }
    }

    /// A close from `side` is about to be relayed: what it sent before goes first.
    mutating func releaseHeldBeforeClose(from side: Side, now: Micros, into out: inout [RelayCommand]) {
        guard !interceptQueue.isEmpty else { return }
        let ids = interceptQueue.held.filter { $0.record.from == side }.map(\.id)
        guard !ids.isEmpty else { return }
        out.append(note(.info, "intercept: the \(side.rawValue) closes; its \(ids.count) held messages forwarded first", now: now))
        releaseHeld(ids, now: now, into: &out)
    }

    /// End of `handle`: tells the desk what is held now, and lets go of everything once the
    /// pair is over (held messages can no longer be relayed: recorded as dropped).
    mutating func publishIntercept(now: Micros, into out: inout [RelayCommand]) {
        guard let desk = config.intercept else { return }
        if phase == .finished, interceptPause != nil || !interceptQueue.isEmpty || interceptChanged {
            let held = interceptQueue.held
            if !held.isEmpty {
                out.append(note(.warning, "intercept: the connection ended with \(held.count) messages held; they were never relayed", now: now))
            }
            for id in held.map(\.id) {
                if var record = interceptQueue.take(id)?.record {
                    record.t = now
                    record.action = .dropped
                    record.fault = Self.interceptRule
                    out.append(.record(.frame(record)))
                }
            }
            interceptPause = nil
            interceptChanged = false
            desk.forget(conn)
            return
        }
        guard interceptChanged else { return }
        interceptChanged = false
        desk.publish(conn, queue: interceptQueue)
    }

    private mutating func releaseHeld(_ ids: [Int], now: Micros, into out: inout [RelayCommand]) {
        for id in ids {
            guard let message = interceptQueue.take(id) else { continue }
            interceptChanged = true
            release(message, .forward, now: now, into: &out)
        }
    }

    /// Carries out one decision: the frame (or its edit) goes on, or nothing does, and the
    /// capture says which.
    private mutating func release(_ message: InterceptQueue.Held, _ decision: InterceptDecision, now: Micros,
                                  into out: inout [RelayCommand]) {
        let side = message.record.from
        var record = message.record
        record.t = now
        let relayable = phase == .open && !hardEnded.contains(side.other)
        switch decision {
        case .forward where relayable:
            record.action = .delayed(max(0, now - message.heldAt))
            record.fault = Self.interceptRule
            send(message.frame, from: side, record: record, delay: 0, now: now, into: &out)
        case .edit(let payload) where relayable:
            record.action = .dropped
            record.fault = Self.interceptEditRule
            out.append(.record(.frame(record)))
            out.append(.record(.fault(FaultRecord(conn: conn, t: now, rule: Self.interceptEditRule, kind: Self.interceptRule,
                                                   target: side.other,
                                                   detail: "the operator edited held message \(message.id) from the \(side.rawValue) "
                                                       + "(\(message.record.payload.count) bytes as received, \(payload.count) as sent)"))))
            let edited = Frame(opcode: message.frame.opcode, payload: payload)
            let sent = FrameRecord(conn: conn, t: now, from: side, opcode: edited.opcode, masked: side == .client,
                                   payload: payload, action: .injected, fault: Self.interceptEditRule)
            send(edited, from: side, record: sent, delay: 0, now: now, into: &out)
        case .drop where relayable:
            record.action = .dropped
            record.fault = Self.interceptDropRule
            out.append(.record(.frame(record)))
            out.append(.record(.fault(FaultRecord(conn: conn, t: now, rule: Self.interceptDropRule, kind: Self.interceptRule,
                                                   target: side.other,
                                                   detail: "the operator dropped held message \(message.id) from the \(side.rawValue)"))))
        default:
            out.append(note(.warning, "intercept: held message \(message.id) from the \(side.rawValue) could not be relayed: the connection is closing", now: now))
            record.action = .dropped
            record.fault = Self.interceptRule
            out.append(.record(.frame(record)))
        }
    }
}
