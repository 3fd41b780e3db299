import JSON

/// The outcome of a replay as text or JSON, the same shape whichever side was played.
public struct ReplayReport: Sendable {
    public var capture: String
    /// "server" or "client".
    public var role: String
    public var connectionsRecorded: Int
    public var connectionsReplayed: Int
    public var deviations: [Deviation]
    public var stoppedStrictly: Bool
    /// Copies run at once (`--clients N`); deviations name their copy when more than one.
    public var copies: Int
    /// Peer frames not lined up one by one: timer events (matched loosely), other
    /// clients' events and ignored ones, with their recorded and live counts.
    public var loose: [LooseTally] = []
    /// Deviations name their client (`--all-clients`).
    public var showsClients = false

    public init(capture: String, role: String, connectionsRecorded: Int, connectionsReplayed: Int,
                deviations: [Deviation], stoppedStrictly: Bool = false, copies: Int = 1) {
        self.copies = copies
        self.capture = capture
        self.role = role
        self.connectionsRecorded = connectionsRecorded
        self.connectionsReplayed = connectionsReplayed
        self.deviations = deviations
        self.stoppedStrictly = stoppedStrictly
    }

    /// Deviation counts by kind, in a fixed order, zero counts left out.
    public var counts: [(kind: Deviation.Kind, count: Int)] {
        let order: [Deviation.Kind] = [.handshake, .missing, .extra, .different, .otherOrder, .differentEnd,
                                       .missingConnection, .extraConnection]
        return order.compactMap { kind in
            let n = deviations.filter { $0.kind == kind }.count
            return n == 0 ? nil : (kind, n)
        }
    }

    public var summary: String {
        var line = "replayed \(connectionsReplayed) connection\(connectionsReplayed == 1 ? "" : "s") as the \(role)"
            + " (\(connectionsRecorded) recorded): "
        if deviations.isEmpty {
            line += "no differences"
        } else {
            line += "\(deviations.count) difference\(deviations.count == 1 ? "" : "s") ("
                + counts.map { "\($0.count) \($0.kind.rawValue)" }.joined(separator: ", ") + ")"
        }
        if stoppedStrictly { line += "; stopped at the first (--strict)" }
        return line
    }

    /// Per kind (in the order of `counts`), the event names concerned with their counts,
    /// most frequent first; deviations without an event (handshake, end, connections) are
    /// counted under the kind only.
    public var byEvent: [(kind: Deviation.Kind, count: Int, events: [(event: String, count: Int)])] {
        counts.map { entry in
            var tally: [String: Int] = [:]
            var order: [String] = []
            for deviation in deviations where deviation.kind == entry.kind {
                guard let event = deviation.event else { continue }
                if tally[event] == nil { order.append(event) }
                tally[event, default: 0] += 1
            }
            let events = order.map { ($0, tally[$0] ?? 0) }.enumerated()
                .sorted { $0.element.1 != $1.element.1 ? $0.element.1 > $1.element.1 : $0.offset < $1.offset }
                .map { (event: $0.element.0, count: $0.element.1) }
            return (entry.kind, entry.count, events)
        }
    }

    /// The peer, as the report names it.
    var peer: String { role == "server" ? "client" : "server" }

    /// "bird:sim-event (the server's own timer, matched loosely): 2 recorded, 1 live".
    func describe(_ tally: LooseTally) -> String {
        let why: String
        switch tally.treatment {
        case .timer: why = "the \(peer)'s own timer, matched loosely"
        case .others: why = "caused by other clients, not compared"
        case .ignored: why = "--ignore-event"
        case .strict: why = "compared"
        }
        return "\(tally.event) (\(why)): \(tally.recorded) recorded, \(tally.live) live"
    }

    public var text: String {
        var out = deviations.map { $0.text(showingCopy: copies > 1, showingClient: showsClients) + "\n" }.joined()
        if !deviations.isEmpty {
            let groups = byEvent
            let width = groups.map(\.kind.rawValue.count).max() ?? 0
            out += "by kind and event:\n"
            for group in groups {
                let name = group.kind.rawValue + String(repeating: " ", count: width - group.kind.rawValue.count)
                let events = group.events.map { "\($0.count) \($0.event)" }.joined(separator: ", ")
                out += "  \(name)  \(group.count)" + (events.isEmpty ? "" : ": " + events) + "\n"
            }
        }
        for tally in loose { out += "not lined up: " + describe(tally) + "\n" }
        return out + summary + "\n"
    }

    public var json: String {
        let object = JSONObject([
            ("capture", .string(capture)),
            ("role", .string(role)),
            ("connections_recorded", .int(Int64(connectionsRecorded))),
            ("connections_replayed", .int(Int64(connectionsReplayed))),
            ("differences", .int(Int64(deviations.count))),
            ("counts", .object(JSONObject(counts.map { ($0.kind.rawValue, JSONValue.int(Int64($0.count))) }))),
            ("by_event", .object(JSONObject(byEvent.map { group in
                (group.kind.rawValue, JSONValue.object(JSONObject(group.events.map { ($0.event, JSONValue.int(Int64($0.count))) })))
            }))),
            ("loose", .array(loose.map { tally in
                .object(JSONObject([("event", .string(tally.event)), ("treatment", .string(tally.treatment.rawValue)),
                                    ("recorded", .int(Int64(tally.recorded))), ("live", .int(Int64(tally.live)))]))
            })),
            ("stopped_strictly", .bool(stoppedStrictly)),
            ("deviations", .array(deviations.map(\.json))),
        ])
        return JSONWriter.serialize(.object(object)) + "\n"
    }
}
