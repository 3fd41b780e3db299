import Capture
import Vocabulary
import WebSocket

/// Holes, resynchronisation at a provable frame boundary, and the ends of the streams.
extension WebSocketConnection {
    // MARK: - Gaps and resynchronisation

    func gap(_ count: Int64, reason: TCPGapReason, from index: Int, t: Micros) {
        let at = directions[index].offset
        directions[index].offset += count
        switch phase {
        case .ignored:
            return
        case .detecting:
            directions[index].resync = []
            directions[index].segmentEnds = []
            if sawSYN && directions[index].offset == count && index == clientIndex { ignore() }
        case .request, .response:
            note(.error, "\(count) \(reason.rawValue) during the upgrade (\(streamName(index)), offset \(at)): "
                 + "connection not decoded further", t: t)
            ignore()
        case .open:
            guard directions[index].state != .idle else { return }
            startResync(index, reason: "\(count) \(reason.rawValue) in the \(streamName(index)) at offset \(at)", t: t)
        }
    }

    func startResync(_ index: Int, reason: String?, t: Micros) {
        if let reason { note(.warning, reason + "; resynchronising at the next provable frame boundary", t: t) }
        var dir = directions[index]
        dir.state = .resync
        dir.recorder.restartDecoding()
        dir.resync = []
        dir.segmentEnds = []
        dir.skipped = 0
        if dir.recorder.validator != nil {
            dir.recorder.validator = MessageValidator(rsv1Allowed: deflate != nil || midStream, expectMasked: index == clientIndex)
        }
        directions[index] = dir
    }

    func resyncFeed(_ bytes: UnsafeRawBufferPointer, from index: Int, segmentEnds: [Int], t: Micros) {
        var dir = directions[index]
        directions[index] = DecodingDirection(recorder: FrameRecorder(sender: dir.recorder.sender, limits: FrameRecorder.Limits(maxPayload: 0)))  // drop the reference: no copy on write
        let base = dir.resync.count
        dir.resync.append(contentsOf: bytes)
        dir.segmentEnds.append(contentsOf: segmentEnds.map { $0 + base })
        let finder = FrameBoundaryFinder(masked: index == clientIndex, rsv1Allowed: deflate != nil || midStream,
                                         maxPayload: limits.maxPayload, minFrames: 1)
        let ends = dir.segmentEnds
        let result = dir.resync.withUnsafeBytes { finder.find(in: $0, segmentEnds: ends) }
        switch result {
        case .found(let start):
            dir.skipped += start
            let skipped = dir.skipped
            dir.state = .frames
            dir.recorder.append(dir.resync[start...])
            dir.resync = []
            dir.segmentEnds = []
            dir.skipped = 0
            directions[index] = dir
            note(.info, "\(streamName(index)): frames picked up at a proven frame boundary after skipping \(skipped) bytes", t: t)
            if phase == .open { drainFrames(index, t: t) }
        case .needMore(let discardable):
            var drop = discardable
            if dir.resync.count - drop > limits.maxResyncBuffer { drop = dir.resync.count - limits.maxResyncBuffer / 2 }
            if drop > 0 {
                dir.resync.removeFirst(drop)
                dir.segmentEnds = dir.segmentEnds.compactMap { $0 > drop ? $0 - drop : nil }
                dir.skipped += drop
            }
            directions[index] = dir
        }
    }

    // MARK: - Ends

    func end(_ kind: EndKind, from index: Int, t: Micros) {
        guard !directions[index].ended else { return }
        directions[index].ended = true
        if case .resync = directions[index].state, directions[index].skipped + directions[index].resync.count > 0 {
            note(.warning, "\(streamName(index)) ended before a frame boundary could be proven: "
                 + "\(directions[index].skipped + directions[index].resync.count) bytes not decoded", t: t)
        }
        if case .frames = directions[index].state, directions[index].recorder.decoder.bufferedByteCount > 0, phase == .open {
            note(.warning, "\(streamName(index)) ended inside a frame: \(directions[index].recorder.decoder.bufferedByteCount) bytes left undecoded", t: t)
        }
        directions[index].state = .idle
        guard let id else { return }
        queue.append(.end(EndRecord(conn: id, t: t, side: side(index), kind: kind)))
    }

    func conflict(offset: Int64, count: Int, from index: Int, t: Micros) {
        note(.warning, "\(streamName(index)): \(count) retransmitted bytes differ from the first copy near offset \(offset) "
             + "(the first copy was kept)", t: t)
    }

    /// The capture ended: each direction still open gets a capture-end record.
    func captureEnded(t: Micros) {
        for index in 0..<2 where !directions[index].ended {
            end(.captureEnd, from: index, t: t)
        }
    }

    var bothEnded: Bool { directions[0].ended && directions[1].ended }
}

extension WebSocketConnection {
    /// Where this connection's flush comes at the end of the capture (see `DecoderState.finish`).
    var finishKey: FlowLedger.FinishKey { FlowLedger.FinishKey(id: id, openedAt: openedAt, key: key) }
}
