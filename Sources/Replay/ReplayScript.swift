import Capture
import Vocabulary
import Protocols
import WebSocket

/// What happened to a live connection being replayed (the I/O shell reports these).
public enum ReplayEvent: Sendable, Hashable {
    /// Client role: the TCP connection to the server is up.
    case connected
    /// Server role: the client's upgrade request arrived.
    case request(HTTPRequestHead)
    /// Client role: the server's upgrade response arrived.
    case response(HTTPResponseHead)
    /// A frame from the live peer.
    case frame(Frame)
    /// A wake-up asked for with `.schedule` (or any earlier one: the script checks the time).
    case timer
    /// The live peer's stream ended.
    case peerEnded(RecordedEnd)
}

/// What the shell must do, in order.
public enum ReplayAction: Sendable, Hashable {
    /// Write raw bytes (an HTTP head).
    case write([UInt8])
    /// Encode and write a frame.
    case send(Frame)
    /// Send FIN after queued writes; keep reading.
    case shutdown
    /// Abort with RST.
    case reset
    /// Close the socket once queued writes are out.
    case close
    /// Deliver `.timer` at this live time (microseconds since the replay started).
    case schedule(at: Micros)
    /// A deviation from the recording.
    case report(Deviation)
    /// The connection's replay is over; no more events are needed.
    case finished
    /// What the connection's loosely matched peer frames were (recorded and live counts),
    /// sent once, before `finished`.
    case tally([LooseTally])
    /// Client role: the server could not be reached, or did not answer the upgrade request
    /// in time. The shell decides what that means: before any connection of the run was
    /// established the run is unusable (exit 2), after it a `handshake` difference.
    case unreachable(String)
}

/// The replay of one recorded connection, playing one side (`role`) against a live peer.
/// Pure: events in, commands out, time passed in.
///
/// The recording becomes a list of steps for our side (frames to send, then how our stream
/// ends) and a list of frames expected from the peer. A step waits for every peer frame that
/// preceded it in the recording (a subscription succeeds only after the client subscribed),
/// then keeps the recorded gap after the latest of those events and of the previous step.
/// A peer frame that does not come within `timing.patience` of when it should have is
/// reported missing and the script moves on.
public struct ReplayScript: Sendable {
    public struct Config: Sendable {
        /// The side we play: `.server` answers a live client, `.client` talks to a live server.
        public var role: Side
        public var timing: ReplayTiming
        public var rules: MatchRules
        /// Which copy this is (`--clients N`), for reports.
        public var copy: Int
        /// Client role: the Host header and request target to use (nil: as recorded).
        public var host: String?
        public var target: String?
        /// Client role: re-signs subscription and sign-in auth for the live socket id.
        public var signer: AuthSigner?
        /// Seed of the masking keys and the Sec-WebSocket-Key (client role).
        public var seed: UInt64
        /// Client role: how long the server may take to answer the upgrade request.
        public var connectTimeout: Micros = 10_000_000
        /// Which peer frames are waited for and compared one by one, and which loosely
        /// (learnt from the recording; empty: every frame strictly).
        public var classes = PeerFrameClasses()
        /// The protocol the recording speaks: names frames' events and gives their kinds.
        public var wire: ReplayProtocol

        /// `rules` default to the fields `wire`'s entry says differ between runs.
        public init(role: Side, wire: ReplayProtocol, timing: ReplayTiming = ReplayTiming(), rules: MatchRules? = nil,
                    copy: Int = 1, host: String? = nil, target: String? = nil, signer: AuthSigner? = nil, seed: UInt64 = 1) {
            self.wire = wire
            self.signer = signer
            self.role = role
            self.timing = timing
            self.rules = rules ?? MatchRules(wire.volatileFields)
            self.copy = copy
            self.host = host
            self.target = target
            self.seed = seed
        }
    }

    enum StepAction: Sendable, Hashable {
        case send(FrameRecord)
        case end(RecordedEnd)
    }

    struct Step: Sendable, Hashable {
        var action: StepAction
        var recordedAt: Micros
        /// Peer frames that must be resolved (seen, or given up) before this step.
        var waitsFor: Int
    }

    enum Phase: Sendable, Hashable {
        case connecting
        case awaitingRequest
        /// Client role: request sent; the answer is due by `deadline`.
        case awaitingResponse(key: String, deadline: Micros)
        case open
        /// Our side ended (FIN sent); waiting for the peer's end until `deadline`.
        case closing(deadline: Micros)
        case finished
    }

    public let config: Config
    public let recording: RecordedConnection
    let steps: [Step]
    var nextStep = 0
    var aligner: PeerAligner
    var phase: Phase
    /// The latest executed step: (recorded time, live time).
    var lastStep: (recorded: Micros, live: Micros) = (0, 0)
    /// Decodes the live peer's messages (its own instance: it learns the live dialect).
    var liveDecoder: any WireProtocol
    /// The socket id the live peer's handshake gave, for re-signing auth.
    var liveSocketID: String?
    /// Whether pings from the peer were answered in the recording.
    let answersPings: Bool
    var peerEnded = false
    /// Close frames sent and received: a server closes the TCP connection once both are
    /// through (RFC 6455 7.1.1) when the recording says nothing more.
    var sentClose = false
    var receivedClose = false
    var generator: SeededGenerator
    var scheduled: Micros?
    /// Peer frames not lined up one by one (timer, others', ignored events).
    var loose = LooseEvents()
    /// Live time the connection opened (handshake through), for the loose check.
    var openedLive: Micros?
    /// The live time of the event being handled.
    var clock: Micros = 0

    public init(_ recording: RecordedConnection, config: Config) {
        self.config = config
        self.recording = recording
        let mine = config.role
        var steps: [Step] = []
        var expected: [FrameRecord] = []
        var peerPings = 0, ourPongs = 0
        var recordedDecoder = config.wire.instance()
        for frame in recording.frames {
            if frame.from == mine {
                guard RecordedConnection.arrived(frame) else { continue }
                if frame.opcode == .pong { ourPongs += 1; continue }   // answered live instead
                steps.append(Step(action: .send(frame), recordedAt: frame.t, waitsFor: expected.count))
            } else {
                guard RecordedConnection.wasSent(frame) else { continue }
                if frame.opcode == .ping { peerPings += 1; continue }
                if frame.opcode == .pong { continue }
                if frame.opcode != .close {
                    let event = FrameEvent(opcode: frame.opcode, payload: frame.payload, wire: &recordedDecoder)
                    let treatment = config.classes.treatment(of: event)
                    if treatment != .strict {
                        // Not waited for: no step depends on it.
                        loose.noteRecorded(event.name, treatment, at: RecordedConnection.sentAt(frame))
                        continue
                    }
                }
                expected.append(frame)
            }
        }
        if let end = recording.end(of: mine) {
            let before = expected.filter { RecordedConnection.sentAt($0) <= end.t }.count
            steps.append(Step(action: .end(end.kind), recordedAt: end.t, waitsFor: max(before, steps.last?.waitsFor ?? 0)))
        }
        self.steps = steps
        self.answersPings = peerPings == 0 || ourPongs > 0
        self.aligner = PeerAligner(expected: expected, matcher: FrameMatcher(rules: config.rules))
        self.phase = config.role == .client ? .connecting : .awaitingRequest
        self.generator = SeededGenerator(seed: config.seed)
        self.liveDecoder = config.wire.instance()
    }

    /// Deviations found so far are reported through `.report`; this says whether the
    /// replay of this connection is over.
    public var isFinished: Bool { phase == .finished }

    /// The handshake time of the recording: the anchor of all recorded gaps.
    var recordedStart: Micros { recording.response?.t ?? recording.request?.t ?? recording.openedAt }

    public mutating func handle(_ event: ReplayEvent, now: Micros) -> [ReplayAction] {
        clock = max(clock, now)
        var out: [ReplayAction] = []
        switch event {
        case .connected:
            guard case .connecting = phase else { break }
            sendRequest(now: now, into: &out)
        case .request(let request):
            guard case .awaitingRequest = phase else { break }
            answer(request, now: now, into: &out)
        case .response(let response):
            guard case .awaitingResponse(let key, _) = phase else { break }
            check(response, key: key, now: now, into: &out)
        case .frame(let frame):
            received(frame, now: now, into: &out)
        case .timer:
            scheduled = nil
        case .peerEnded(let kind):
            peerEnd(kind, now: now, into: &out)
        }
        advance(now: now, into: &out)
        return out
    }

    // MARK: Frames from the peer

    mutating func received(_ frame: Frame, now: Micros, into out: inout [ReplayAction]) {
        guard phase != .finished else { return }
        switch frame.opcode {
        case .ping:
            if answersPings, !isClosing {
                out.append(.send(Frame(opcode: .pong, maskingKey: maskIfClient(), payload: frame.payload)))
            }
            return
        case .pong:
            return
        case .close:
            break
        default:
            let event = FrameEvent(opcode: frame.opcode, payload: frame.payload, wire: &liveDecoder)
            if let socketID = event.socketID { liveSocketID = socketID }
            let treatment = config.classes.treatment(of: event)
            if treatment != .strict {
                loose.noteLive(event.name, treatment, at: now)
                return
            }
        }
        for outcome in aligner.observe(frame, now: now) { out.append(.report(deviation(outcome, now: now))) }
        if frame.opcode == .close {
            receivedClose = true
            for outcome in aligner.peerClosed(now: now) { out.append(.report(deviation(outcome, now: now))) }
        }
    }

    var isClosing: Bool {
        if case .closing = phase { return true }
        return false
    }

    mutating func peerEnd(_ kind: RecordedEnd, now: Micros, into out: inout [ReplayAction]) {
        guard !peerEnded, phase != .finished else { return }
        peerEnded = true
        for outcome in aligner.giveUpAll(now: now) { out.append(.report(deviation(outcome, now: now))) }
        let recorded = recording.end(of: config.role.other)?.kind
        if let recorded, recorded != kind {
            out.append(.report(Deviation(kind: .differentEnd, copy: config.copy, conn: recording.conn, t: now,
                                         expected: Self.describe(recorded), observed: Self.describe(kind))))
        }
        switch phase {
        case .open where kind == .fin && nextStep < steps.count:
            break   // half-closed: the rest of our script can still be written
        case .finished:
            break
        default:
            finish(.close, into: &out)
        }
    }

    static func describe(_ end: RecordedEnd) -> String { end == .fin ? "TCP FIN" : "TCP RST" }

    // MARK: Steps

    mutating func advance(now: Micros, into out: inout [ReplayAction]) {
        while true {
            switch phase {
            case .open:
                break
            case .closing(let deadline):
                if now >= deadline { finish(.close, into: &out) } else { schedule(deadline, into: &out) }
                return
            case .awaitingResponse(_, let deadline):
                if now >= deadline {
                    out.append(.unreachable("no answer to the upgrade request within \(ReplayTiming.describe(config.connectTimeout))"))
                    finish(.close, into: &out)
                } else {
                    schedule(deadline, into: &out)
                }
                return
            default:
                return
            }
            if nextStep < steps.count {
                let step = steps[nextStep]
                if aligner.resolvedPrefix >= step.waitsFor {
                    let anchor = anchorFor(waitsFor: step.waitsFor)
                    let due = anchor.live + config.timing.delay(step.recordedAt - anchor.recorded)
                    guard now >= due else { schedule(due, into: &out); return }
                    nextStep += 1
                    lastStep = (step.recordedAt, now)
                    execute(step, now: now, into: &out)
                    continue
                }
                if !waitForPeer(now: now, into: &out) { return }
                continue
            }
            // Every step done: wait for the remaining peer frames, then for the peer's end.
            if aligner.resolvedPrefix < aligner.expected.count {
                if !waitForPeer(now: now, into: &out) { return }
                continue
            }
            if peerEnded || (config.role == .server && sentClose && receivedClose) {
                finish(.close, into: &out)
                return
            }
            phase = .closing(deadline: now + config.timing.patience)
        }
    }

    /// The next expected peer frame is late or not: gives it up past its deadline (true:
    /// something changed), or schedules a wake-up for the deadline (false). The deadline
    /// is `ReplayTiming.peerWait` after the anchor, plus the patience.
    mutating func waitForPeer(now: Micros, into out: inout [ReplayAction]) -> Bool {
        let index = aligner.resolvedPrefix
        let expectedAt = RecordedConnection.sentAt(aligner.expected[index])
        let anchor = anchorFor(waitsFor: index)
        let wait = config.timing.peerWait(expectedAt - anchor.recorded)
        let deadline = anchor.live.addingClamped(wait).addingClamped(config.timing.patience)
        if now >= deadline {
            for outcome in aligner.giveUp(index, now: now) { out.append(.report(deviation(outcome, now: now))) }
            return true
        }
        schedule(deadline, into: &out)
        return false
    }

    /// The latest event before something that waits for `waitsFor` peer frames: the last
    /// step we executed or the moment the last of those frames was resolved.
    func anchorFor(waitsFor: Int) -> (recorded: Micros, live: Micros) {
        var anchor = lastStep
        if waitsFor > 0, let reached = aligner.prefixReachedAt(waitsFor) {
            let recorded = RecordedConnection.sentAt(aligner.expected[waitsFor - 1])
            if recorded > anchor.recorded || (recorded == anchor.recorded && reached > anchor.live) {
                anchor = (recorded, reached)
            }
        }
        return anchor
    }

    mutating func execute(_ step: Step, now: Micros, into out: inout [ReplayAction]) {
        switch step.action {
        case .send(let record):
            var payload = record.payload
            if config.role == .client {
                payload = aligner.matcher.rewrite(payload)
                if let signer = config.signer, let socketID = liveSocketID {
                    payload = signer.resign(payload, socketID: socketID)
                }
            }
            if record.opcode == .close { sentClose = true }
            out.append(.send(Frame(fin: record.fin, opcode: record.opcode, maskingKey: maskIfClient(), payload: payload)))
        case .end(.reset):
            finish(.reset, into: &out)
        case .end(.fin):
            out.append(.shutdown)
            if peerEnded { finish(.close, into: &out) } else { phase = .closing(deadline: now + config.timing.patience) }
        }
    }

    mutating func finish(_ how: ReplayAction, into out: inout [ReplayAction]) {
        guard phase != .finished else { return }
        phase = .finished
        if let openedLive {
            let now = max(openedLive, clock)
            for finding in loose.check(recordedSpan: recording.lastActivity - recordedStart, liveSpan: now - openedLive) {
                var deviation = Deviation(kind: finding.kind, copy: config.copy, conn: recording.conn, t: now,
                                          expected: finding.kind == .extra ? nil : finding.event,
                                          observed: finding.kind == .missing ? nil : finding.event,
                                          details: [finding.details])
                deviation.event = finding.event
                out.append(.report(deviation))
            }
        }
        let tallies = loose.tallies
        if !tallies.isEmpty { out.append(.tally(tallies)) }
        out.append(how)
        out.append(.finished)
    }

    mutating func schedule(_ at: Micros, into out: inout [ReplayAction]) {
        guard scheduled != at else { return }
        scheduled = at
        out.append(.schedule(at: at))
    }

    mutating func maskIfClient() -> MaskingKey? {
        config.role == .client ? MaskingKey.random(using: &generator) : nil
    }

    func deviation(_ outcome: PeerAligner.Outcome, now: Micros) -> Deviation {
        let wire = config.wire
        var deviation = outcome.deviation(conn: recording.conn, now: now) { opcode, payload in
            var decoder = wire.instance()
            return FrameEvent(opcode: opcode, payload: payload, wire: &decoder).name
        }
        deviation.copy = config.copy
        return deviation
    }
}

extension Micros {
    /// The sum, or the largest value on overflow: a deadline that far is never reached.
    func addingClamped(_ other: Micros) -> Micros {
        let (sum, overflow) = addingReportingOverflow(other)
        return overflow ? (other > 0 ? .max : .min) : sum
    }
}
