import Capture
import Protocols
import Vocabulary
import WebSocket

/// How a replay treats each event (by name, and by the kind its protocol entry gives it) the live peer sends. Not every
/// recorded peer frame is an answer to our side's script: a server pushes events on its own
/// timer and relays what other clients did. Waiting for those, or requiring them to repeat
/// word for word, makes a replay slow and noisy; so each event name gets a treatment.
public struct PeerFrameClasses: Sendable, Hashable {
    public enum Treatment: String, Sendable, Hashable {
        /// Caused by our script (an answer, or the peer's part of the conversation): waited
        /// for and compared frame by frame.
        case strict
        /// Sent on the peer's own timer: never waited for; matched loosely (count and
        /// interval within a tolerance, content not compared).
        case timer
        /// Caused by another client (client events relayed by the server, presence
        /// members coming and going): never waited for, not compared.
        case others
        /// Dropped from the comparison (`--ignore-event NAME`).
        case ignored
    }

    /// Event names sent on the peer's own timer.
    public var timer: Set<String>
    /// Event names other clients' activity caused.
    public var others: Set<String>
    /// Event names dropped from the comparison.
    public var ignored: Set<String>
    /// The peer is a server: its client and member events are others' whether or not the
    /// recording has them (the copies of `--clients N` cause them for each other).
    public var peerIsServer = false

    public init(timer: Set<String> = [], others: Set<String> = [], ignored: Set<String> = []) {
        self.timer = timer
        self.others = others
        self.ignored = ignored
    }

    /// The treatment of a frame carrying `event` (see `FrameEvent`).
    func treatment(of event: FrameEvent) -> Treatment {
        treatment(of: event.name, kind: event.kind)
    }

    /// The treatment of frames with this event name and kind (nil: the frame carries no
    /// event its protocol decodes).
    public func treatment(of name: String, kind: RealtimeEventKind?) -> Treatment {
        if ignored.contains(name) { return .ignored }
        if others.contains(name) || (peerIsServer && kind.map(Self.causedByOthers) == true) { return .others }
        if timer.contains(name) { return .timer }
        return .strict
    }

    // MARK: Learning the classes from the recording

    /// How far after one of our frames a peer frame may come and still count as its answer,
    /// and how soon after a peer frame one of ours must follow to count as our answer to it.
    public static let responseWindow: Micros = 250_000
    /// How much an answer's latency may vary (the lags from our latest frame before it).
    public static let lagSpread: Micros = 100_000
    /// How far apart two of a client's client events must be to count as a repeat (one per
    /// channel in a burst is not a timer).
    public static let repeatGap: Micros = 1_000_000

    /// The kinds of the connection's own exchanges (its handshake, subscriptions, sign-in,
    /// pings and errors): requests and answers whose role the protocol fixes, always strict.
    static let protocolExchanges: Set<RealtimeEventKind> = [
        .connectionEstablished, .subscriptionSucceeded, .subscriptionError, .signinSuccess,
        .error, .ping, .pong, .subscribe, .unsubscribe, .signin,
    ]

    /// The kinds a server sends because of another client: client events it relays,
    /// presence members coming and going.
    static func causedByOthers(_ kind: RealtimeEventKind) -> Bool {
        kind == .clientEvent || kind == .memberAdded || kind == .memberRemoved
    }

    /// Learns the classes from the recorded connections a replay plays, `role` being our side.
    ///
    /// Each recording's frames are decoded with its own instance of its entry: `wires`'
    /// for the recordings it names (those whose own detection chose another), else `wire`'s. Close
    /// frames, pings and pongs are never classified (they are the connection's own life),
    /// nor are the kinds of `protocolExchanges`. With a server as the peer, client events
    /// and presence member events are `others`. Any other event name is strict when it looks like an answer to our frames
    /// (nine in ten came within `responseWindow` after one of ours, at lags that vary by
    /// `lagSpread` at most) or like something we answer (nine in ten followed by one of ours
    /// the same way), and `timer` otherwise: busy traffic puts timer events close to our
    /// frames too, but at scattered lags, where a cause and its effect keep their latency. The handshake counts as our first frame. A client's
    /// client events (kind `clientEvent`, from a client peer) are the application's own initiative:
    /// when one repeats within a connection, `repeatGap` or more apart, it is `timer` too (clients that trigger on a
    /// timer at once make their events look like answers to each other's relayed ones).
    public static func learn(from recordings: [RecordedConnection], role: Side, ignoring ignored: Set<String> = [],
                             wire: ReplayProtocol, wires: [ConnectionID: ReplayProtocol] = [:]) -> PeerFrameClasses {
        var classes = PeerFrameClasses(ignored: ignored)
        classes.peerIsServer = role == .client
        var tally: [String: Tally] = [:]
        for recording in recordings {
            var decoder = (wires[recording.conn] ?? wire).instance()
            var clientEvents: [String: Micros] = [:]
            let start = recording.response?.t ?? recording.request?.t ?? recording.openedAt
            // Capture order is time order, but clamp anyway: the searches need ascending times.
            var ours = [start] + recording.frames.filter { $0.from == role && RecordedConnection.arrived($0) }.map(\.t)
            for i in ours.indices.dropFirst() where ours[i] < ours[i - 1] { ours[i] = ours[i - 1] }
            for frame in recording.frames where frame.from == role.other && RecordedConnection.wasSent(frame) {
                guard ![.close, .ping, .pong].contains(frame.opcode) else { continue }
                let event = FrameEvent(opcode: frame.opcode, payload: frame.payload, wire: &decoder)
                let name = event.name
                if let kind = event.kind, protocolExchanges.contains(kind) { continue }
                if role == .client, let kind = event.kind, causedByOthers(kind) {
                    classes.others.insert(name)
                    continue
                }
                if role == .server && event.kind == .clientEvent {
                    if let first = clientEvents[name], frame.t - first >= repeatGap { classes.timer.insert(name) }
                    if clientEvents[name] == nil { clientEvents[name] = frame.t }
                }
                let sent = RecordedConnection.sentAt(frame)
                var entry = tally[name] ?? Tally()
                entry.total += 1
                entry.before.add(latest(in: ours, atOrBefore: sent).map { sent - $0 })
                entry.after.add(earliest(in: ours, atOrAfter: frame.t).map { $0 - frame.t })
                tally[name] = entry
            }
        }
        for (name, entry) in tally where !entry.before.consistent(of: entry.total) && !entry.after.consistent(of: entry.total) {
            classes.timer.insert(name)
        }
        classes.timer.subtract(classes.others)
        return classes
    }

    /// Lags from one side's frames to the other's, for one event name.
    struct Lags {
        /// Occurrences with a lag within the response window, and those lags' range.
        var within = 0
        var shortest: Micros = .max
        var longest: Micros = 0

        mutating func add(_ lag: Micros?) {
            guard let lag, lag <= responseWindow else { return }
            within += 1
            shortest = min(shortest, lag)
            longest = max(longest, lag)
        }

        /// Nine in ten within the window, at a steady lag (or too few to tell): a cause and
        /// its effect. A timer lands near busy traffic too, but at lags all over the place.
        func consistent(of total: Int) -> Bool {
            within * 10 >= total * 9 && (total < 3 || longest - shortest <= lagSpread)
        }
    }

    struct Tally {
        var total = 0
        /// From our latest frame to the peer's frame (did we prompt it?).
        var before = Lags()
        /// From the peer's frame to our next one (did we answer it?).
        var after = Lags()
    }

    /// The latest time at or before `t` in ascending `times` (binary search).
    static func latest(in times: [Micros], atOrBefore t: Micros) -> Micros? {
        var low = 0, high = times.count
        while low < high {
            let middle = (low + high) / 2
            if times[middle] <= t { low = middle + 1 } else { high = middle }
        }
        return low > 0 ? times[low - 1] : nil
    }

    /// The earliest time at or after `t` in ascending `times` (binary search).
    static func earliest(in times: [Micros], atOrAfter t: Micros) -> Micros? {
        var low = 0, high = times.count
        while low < high {
            let middle = (low + high) / 2
            if times[middle] < t { low = middle + 1 } else { high = middle }
        }
        return low < times.count ? times[low] : nil
    }
}
