import Capture
import WebSocket

/// How a replay treats each kind (event name) of frame the live peer sends. Not every
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

    public init(timer: Set<String> = [], others: Set<String> = [], ignored: Set<String> = []) {
        self.timer = timer
        self.others = others
        self.ignored = ignored
    }

    /// The treatment of frames with this event name (see `PeerFrameClasses.event`).
    public func treatment(of event: String) -> Treatment {
        if ignored.contains(event) { return .ignored }
        if others.contains(event) { return .others }
        if timer.contains(event) { return .timer }
        return .strict
    }

    /// The name a frame is classified and reported under: the `event` of a JSON text frame,
    /// else the opcode ("close", "binary", "text" for text that is not such JSON).
    public static func event(opcode: Opcode, payload: [UInt8]) -> String {
        if opcode == .text, let name = FrameMatcher.json(payload)?["event"]?.stringValue { return name }
        return opcode.name
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

    /// Realtime (Bird, Pusher) events whose role the protocol fixes: requests and answers
    /// of the connection, subscription, sign-in and ping exchanges are always strict.
    static let protocolExchanges = [
        ":connection_established", ":subscription_succeeded", ":subscription_error", ":signin_success",
        ":error", ":ping", ":pong", ":subscribe", ":unsubscribe", ":signin",
    ]

    /// Realtime events a server sends because of another client.
    static func causedByOthers(_ event: String) -> Bool {
        event.hasPrefix("client-") || event.hasSuffix(":member_added") || event.hasSuffix(":member_removed")
    }

    /// Learns the classes from the recorded connections a replay plays, `role` being our side.
    ///
    /// Close frames, pings and pongs are never classified (they are the connection's own
    /// life). With a server as the peer, client events and presence member events are
    /// `others`. Any other event name is `timer` when more than a tenth of its occurrences
    /// came more than `responseWindow` after every frame of ours (nothing of ours prompted
    /// them) and fewer than nine in ten were followed within the window by a frame of ours
    /// (we did not answer them), or when three or more came within the window but at lags
    /// spread over more than `lagSpread` (an answer keeps its latency; a timer event lands
    /// at any point between our frames); otherwise strict. The handshake counts as our first frame. A client's
    /// client events (`client-*`, from a client peer) are the application's own initiative:
    /// when one repeats within a connection, `repeatGap` or more apart, it is `timer` too (clients that trigger on a
    /// timer at once make their events look like answers to each other's relayed ones).
    public static func learn(from recordings: [RecordedConnection], role: Side, ignoring ignored: Set<String> = []) -> PeerFrameClasses {
        var classes = PeerFrameClasses(ignored: ignored)
        var tally: [String: (total: Int, unprompted: Int, answered: Int, shortest: Micros, longest: Micros)] = [:]
        for recording in recordings {
            var clientEvents: [String: Micros] = [:]
            let start = recording.response?.t ?? recording.request?.t ?? recording.openedAt
            // Capture order is time order, but clamp anyway: the searches need ascending times.
            var ours = [start] + recording.frames.filter { $0.from == role && RecordedConnection.arrived($0) }.map(\.t)
            for i in ours.indices.dropFirst() where ours[i] < ours[i - 1] { ours[i] = ours[i - 1] }
            for frame in recording.frames where frame.from == role.other && RecordedConnection.wasSent(frame) {
                guard ![.close, .ping, .pong].contains(frame.opcode) else { continue }
                let name = event(opcode: frame.opcode, payload: frame.payload)
                if protocolExchanges.contains(where: { name.hasSuffix($0) }) { continue }
                if role == .client && causedByOthers(name) {
                    classes.others.insert(name)
                    continue
                }
                if role == .server && name.hasPrefix("client-") {
                    if let first = clientEvents[name], frame.t - first >= repeatGap { classes.timer.insert(name) }
                    if clientEvents[name] == nil { clientEvents[name] = frame.t }
                }
                let sent = RecordedConnection.sentAt(frame)
                let lag = latest(in: ours, atOrBefore: sent).map { sent - $0 }
                let prompted = lag.map { $0 <= responseWindow } ?? false
                let answered = earliest(in: ours, atOrAfter: frame.t).map { $0 - frame.t <= responseWindow } ?? false
                var entry = tally[name] ?? (0, 0, 0, .max, 0)
                entry.total += 1
                if !prompted { entry.unprompted += 1 }
                if answered { entry.answered += 1 }
                if let lag, prompted {
                    entry.shortest = min(entry.shortest, lag)
                    entry.longest = max(entry.longest, lag)
                }
                tally[name] = entry
            }
        }
        // An answer comes after its request every time; a timer event lands after one of
        // our frames only by chance, so more than a tenth unprompted makes a timer (unless
        // we answered nine in ten of them: then our side depends on it).
        // Busy traffic puts every timer event close after one of our frames, but at lags
        // all over the place, where an answer keeps its latency: lags spread wider than
        // `lagSpread` make a timer too.
        for (name, entry) in tally where entry.answered * 10 < entry.total * 9
            && (entry.unprompted * 10 > entry.total || (entry.total >= 3 && entry.longest - entry.shortest > lagSpread)) {
            classes.timer.insert(name)
        }
        classes.timer.subtract(classes.others)
        return classes
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
