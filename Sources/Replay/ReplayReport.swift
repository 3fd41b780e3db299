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

    public var text: String {
        deviations.map { $0.text(showingCopy: copies > 1) + "\n" }.joined() + summary + "\n"
    }

    public var json: String {
        let object = JSONObject([
            ("capture", .string(capture)),
            ("role", .string(role)),
            ("connections_recorded", .int(Int64(connectionsRecorded))),
            ("connections_replayed", .int(Int64(connectionsReplayed))),
            ("differences", .int(Int64(deviations.count))),
            ("counts", .object(JSONObject(counts.map { ($0.kind.rawValue, JSONValue.int(Int64($0.count))) }))),
            ("stopped_strictly", .bool(stoppedStrictly)),
            ("deviations", .array(deviations.map(\.json))),
        ])
        return JSONWriter.serialize(.object(object)) + "\n"
    }
}
