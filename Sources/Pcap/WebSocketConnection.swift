import Capture
import Vocabulary
import WebSocket

/// One TCP connection's two reassembled streams turned into capture records: the HTTP
/// upgrade, then frames per direction through the proxy's own `FrameDecoder`, with
/// permessage-deflate inflated per direction when the upgrade negotiated it.
///
/// Directions are indexed by endpoint order (0: from the flow key's `low` endpoint) until the
/// roles are known: the SYN's sender, the one who sent `GET`, or the one whose frames are
/// masked when the capture began mid-connection.
final class WebSocketConnection: TCPFlow {
    enum Phase {
        /// Waiting for the first payload byte to tell what this connection is.
        case detecting
        /// The upgrade request is being read from the client.
        case request
        /// The request is complete; waiting for the server's response.
        case response
        /// 101 seen: frames both ways.
        case open
        /// Not a WebSocket connection (or given up on): bytes are ignored.
        case ignored
    }

    struct Limits {
        var maxPayload = FrameDecoder.defaultMaxPayload
        /// Bytes held per direction while looking for a frame boundary.
        var maxResyncBuffer = 1 << 20
        /// Bytes held per direction while detecting a connection that started mid-stream.
        var maxDetectBytes = 64 << 10
        /// Of an inflated message, the bytes recorded (the analyzer reads a message's start:
        /// its event name, channel and data); the rest is inflated and dropped.
        var maxRecordedMessage = 64 << 10
        /// Client bytes held after an upgrade request while its response has not come.
        var maxUnansweredBytes = 1 << 20
    }

    /// One direction's decoding state.
    struct DecodingDirection {
        enum State {
            /// Parsing an HTTP head.
            case http
            /// Decoding frames.
            case frames
            /// After a gap or a mid-stream start: looking for a provable frame boundary.
            case resync
            /// Nothing more to decode (ended, or the connection is not WebSocket).
            case idle
        }
        // What every frame touches comes first, so a packet reads two or three cache lines
        // of this state instead of four (it matters with thousands of connections open);
        // the upgrade parser and the resynchronisation buffers, used rarely, come last.
        var state = State.http
        var ended = false
        /// Stream offset of the next byte, for notes.
        var offset: Int64 = 0
        var lastTime: Micros = 0
        /// Stream offset just past the segment being fed (`offset` moves there after it),
        /// so a decoding error can say where it happened.
        var fedEnd: Int64 = 0
        /// Frames to records: decoding, message rules, inflation (no validator until the
        /// roles are known).
        var recorder: FrameRecorder
        var http = HTTPHeadParser()
        /// Bytes kept while resynchronising, and where segments ended in them.
        var resync: [UInt8] = []
        var segmentEnds: [Int] = []
        var skipped = 0
    }

    // Per-packet fields first: with the object header they share one cache line.
    @exclusivity(unchecked) var phase = Phase.detecting
    @exclusivity(unchecked) private(set) var id: ConnectionID?
    /// Index (0 or 1) of the client's direction, once known.
    @exclusivity(unchecked) private(set) var clientIndex: Int?
    /// The two directions (0: from the key's low endpoint), in one allocation this object
    /// owns: as an `Array`, each of the several writes a packet makes to them checked the
    /// array's uniqueness first, a read of its cold header (7% of `frames` on pcap input).
    let directions: UnsafeMutablePointer<DecodingDirection>
    let queue: RecordQueue
    @exclusivity(unchecked) private(set) var sawSYN = false
    @exclusivity(unchecked) var midStream = false
    let openedAt: Micros
    let limits: Limits
    private let assignID: () -> ConnectionID?
    @exclusivity(unchecked) var deflate: DeflateParameters?

    init(key: FlowKey, openedAt: Micros, limits: Limits, tcpLimits: TCPReassembler.Limits, queue: RecordQueue,
         assignID: @escaping () -> ConnectionID?) {
        self.openedAt = openedAt
        self.limits = limits
        self.queue = queue
        self.assignID = assignID
        let recorder = FrameRecorder(sender: .server, limits: FrameRecorder.Limits(
            maxPayload: limits.maxPayload, maxRecordedMessage: limits.maxRecordedMessage))
        directions = .allocate(capacity: 2)
        directions.initialize(repeating: DecodingDirection(recorder: recorder), count: 2)
        super.init(key: key, limits: tcpLimits)
    }

    deinit {
        directions.deinitialize(count: 2)
        directions.deallocate()
    }

    var isIgnored: Bool { if case .ignored = phase { true } else { false } }

    /// The SYN (without ACK) came from direction `index`: its sender is the client.
    func sawSYN(from index: Int) {
        guard clientIndex == nil else { return }
        clientIndex = index
        sawSYN = true
    }

    func side(_ index: Int) -> Side { index == clientIndex ? .client : .server }

    /// "client stream 10.0.0.1:40000 -> 10.0.0.2:80": one direction named for a note, with
    /// its flow, so a warning can be traced to the packets.
    func streamName(_ index: Int) -> String { "\(side(index)) stream \(endpoint(index)) -> \(endpoint(1 - index))" }
    func endpoint(_ index: Int) -> Endpoint { index == 0 ? key.low : key.high }

    func note(_ level: NoteRecord.Level, _ message: String, t: Micros) {
        guard let id else { return }
        queue.append(.note(NoteRecord(conn: id, t: t, level: level, message: message)))
    }

    func ignore() {
        phase = .ignored
        for i in 0..<2 {
            directions[i].state = .idle
            directions[i].resync = []
            directions[i].recorder.release()  // frees what it buffered
        }
    }

    /// Becomes a recorded connection: takes the next id and writes the open record.
    func confirm(clientIndex index: Int, t: Micros) -> Bool {
        clientIndex = index
        for i in 0..<2 { directions[i].recorder.sender = side(i) }
        guard let newID = assignID() else { ignore(); return false }
        id = newID
        queue.append(.open(OpenRecord(conn: newID, t: openedAt, client: endpoint(index).description,
                                      server: endpoint(1 - index).description)))
        return true
    }

    // MARK: - Stream events

    func data(_ bytes: UnsafeRawBufferPointer, from index: Int, midStream streamMidStart: Bool, t: Micros) {
        directions[index].lastTime = t
        directions[index].fedEnd = directions[index].offset + Int64(bytes.count)
        defer { directions[index].offset += Int64(bytes.count) }
        switch phase {
        case .ignored:
            return
        case .detecting:
            detect(bytes, from: index, midStream: streamMidStart, t: t)
        case .request, .response, .open:
            feed(bytes, from: index, t: t)
        }
    }

    func detect(_ bytes: UnsafeRawBufferPointer, from index: Int, midStream streamMidStart: Bool, t: Micros) {
        let startsWithGET = bytes.count >= 4 && bytes[0] == 0x47 && bytes[1] == 0x45 && bytes[2] == 0x54 && bytes[3] == 0x20
        if directions[index].offset == 0 || !directions[index].resync.isEmpty {
            if startsWithGET, directions[index].resync.isEmpty, clientIndex == nil || clientIndex == index {
                clientIndex = index
                phase = .request
                directions[1 - index].state = .http
                feed(bytes, from: index, t: t)
                return
            }
        }
        if sawSYN, !streamMidStart {
            // A connection seen from its start whose first bytes are not an upgrade request.
            ignore()
            return
        }
        // Mid-connection: look for masked (client) or unmasked (server) frames.
        midStream = true
        var dir = directions[index]
        dir.resync.append(contentsOf: bytes)
        dir.segmentEnds.append(dir.resync.count)
        directions[index] = dir
        for masked in [true, false] where clientIndex == nil || (clientIndex == index) == masked {
            let finder = FrameBoundaryFinder(masked: masked, rsv1Allowed: true, maxPayload: limits.maxPayload, minFrames: 2)
            let result = dir.resync.withUnsafeBytes { finder.find(in: $0, segmentEnds: dir.segmentEnds) }
            if case .found = result {
                guard confirm(clientIndex: masked ? index : 1 - index, t: t) else { return }
                phase = .open
                note(.warning, "capture started mid-connection: the upgrade was not captured, so permessage-deflate "
                     + "cannot be known and frames are decoded from the first provable frame boundary", t: t)
                // Re-run the search, now that the roles are known, on what each direction holds.
                let held = (0..<2).map { (directions[$0].resync, directions[$0].segmentEnds) }
                for i in 0..<2 {
                    startResync(i, reason: nil, t: t)
                    held[i].0.withUnsafeBytes { resyncFeed($0, from: i, segmentEnds: held[i].1, t: t) }
                }
                return
            }
        }
        if directions[index].resync.count > limits.maxDetectBytes { ignore() }
    }

    /// Routes bytes by the direction's state.
    func feed(_ bytes: UnsafeRawBufferPointer, from index: Int, t: Micros) {
        switch directions[index].state {
        case .idle:
            return
        case .http:
            directions[index].http.append(bytes)
            parseHead(from: index, t: t)
        case .frames:
            directions[index].recorder.append(bytes)
            if phase == .open {
                drainFrames(index, t: t)
            } else if directions[index].recorder.decoder.bufferedByteCount > limits.maxUnansweredBytes {
                // Frames wait for the response (it says whether they are compressed):
                // held without bound they grew with the file (300 MB, 505 MB of RSS).
                note(.warning, "\(streamName(index)): upgrade request unanswered after \(limits.maxUnansweredBytes) "
                     + "bytes of client data: connection not decoded further", t: t)
                ignore()
            }
        case .resync:
            resyncFeed(bytes, from: index, segmentEnds: [bytes.count], t: t)
        }
    }

    func parseHead(from index: Int, t: Micros) {
        if index == clientIndex {
            guard phase == .request else { return }
            do {
                guard let request = try directions[index].http.parseRequest() else { return }
                let upgrade = request.headers.first(named: "upgrade")?.containsIgnoringASCIICase("websocket") ?? false
                guard request.method == "GET", upgrade else { ignore(); return }
                guard confirm(clientIndex: index, t: t), let id else { return }
                queue.append(.upgrade(UpgradeRecord(conn: id, t: t, from: .client, method: request.method,
                                                    target: request.target, headers: request.headers)))
                let rest = directions[index].http.remainder
                directions[index].state = .frames
                directions[index].recorder.append(rest)
                phase = .response
                // The server may already have answered (its bytes waited in its parser).
                parseHead(from: 1 - index, t: t)
            } catch {
                ignore()
            }
        } else {
            guard phase == .response else { return }
            do {
                guard let response = try directions[index].http.parseResponse(), let id else { return }
                queue.append(.upgrade(UpgradeRecord(conn: id, t: t, from: .server, status: response.status,
                                                    reason: response.reason, headers: response.headers)))
                guard response.status == 101 else {
                    note(.info, "upgrade refused with HTTP \(response.status): not decoded further", t: t)
                    phase = .ignored
                    for i in 0..<2 where directions[i].state != .idle { directions[i].state = .idle }
                    return
                }
                deflate = DeflateParameters.negotiated(in: response.headers)
                for i in 0..<2 { setUpDecoding(i) }
                let rest = directions[index].http.remainder
                directions[index].state = .frames
                directions[index].recorder.append(rest)
                phase = .open
                drainFrames(1 - index, t: t)
                drainFrames(index, t: t)
            } catch {
                note(.error, "unparseable upgrade response: \(error)", t: t)
                ignore()
            }
        }
    }

    func setUpDecoding(_ index: Int) {
        directions[index].recorder.negotiated(deflate)
    }

    // MARK: - Frames

    func drainFrames(_ index: Int, t: Micros) {
        guard directions[index].state == .frames, let id else { return }
        var notes: [NoteRecord] = []
        while true {
            let next: FrameRecord?
            do {
                next = try directions[index].recorder.nextRecord(conn: id, t: t, action: .observed, subject: streamName(index),
                                                                 notes: &notes)
            } catch {
                // The failed frame's header stays unread: the buffered bytes start with it.
                let at = directions[index].fedEnd - Int64(directions[index].recorder.decoder.bufferedByteCount)
                note(.error, "\(streamName(index)), frame at offset \(at): \(error.message); looking for the next frame boundary", t: t)
                startResync(index, reason: nil, t: t)
                return
            }
            if !notes.isEmpty {
                for note in notes { queue.append(.note(note)) }
                notes.removeAll()
            }
            guard let next else { return }
            queue.append(.frame(next))
        }
    }
}
