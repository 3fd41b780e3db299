import Capture
import JSON
import Vocabulary
import WebSocket

/// One way the live peer did not do what the recorded peer did. Structured so reports can
/// render it as text or JSON and tests can assert on it.
public struct Deviation: Sendable, Hashable {
    public enum Kind: String, Sendable, Hashable {
        /// A recorded frame the live peer never sent (or not in time).
        case missing
        /// A frame the live peer sent that the recording does not have.
        case extra
        /// The recorded frame's kind (opcode, event) arrived with other content.
        case different
        /// A recorded frame arrived before frames recorded ahead of it.
        case otherOrder = "other-order"
        /// The live peer ended its stream differently (FIN vs RST), or not at all.
        case differentEnd = "different-end"
        /// The upgrade went differently (refused, other status, bad accept key).
        case handshake
        /// A recorded connection the live client never made.
        case missingConnection = "missing-connection"
        /// A connection beyond the recorded ones.
        case extraConnection = "extra-connection"
    }

    public var kind: Kind
    /// Which copy of the replay (1-based; more than one with `--clients N`).
    public var copy: Int
    /// The recorded connection being replayed.
    public var conn: ConnectionID
    /// Live time, microseconds since the replay started.
    public var t: Micros
    /// The recorded frame (or event), summarised.
    public var expected: String?
    /// What the live peer did, summarised.
    public var observed: String?
    /// For `different`: each differing field with both values.
    public var details: [String]
    /// The event name of the frame concerned (`PeerFrameClasses.event`: a JSON `event`,
    /// else the opcode), for grouping; nil for handshakes, ends and connections.
    public var event: String?
    /// The recorded client (`client-2`, as `analyze` names it) of `conn`, when known.
    public var client: String?

    public init(kind: Kind, copy: Int = 1, conn: ConnectionID, t: Micros, expected: String? = nil,
                observed: String? = nil, details: [String] = [], event: String? = nil) {
        self.event = event
        self.kind = kind
        self.copy = copy
        self.conn = conn
        self.t = t
        self.expected = expected
        self.observed = observed
        self.details = details
    }

    /// "text bird:subscribe" / "close 4009 \"bye\"" / "binary 12 bytes" / "ping".
    public static func summary(opcode: Opcode, payload: [UInt8]) -> String {
        switch opcode {
        case .close:
            return "close " + FrameMatcher.describeClose(ClosePayload.lenient(payload))
        case .text:
            if let event = FrameMatcher.json(payload)?["event"]?.stringValue { return "text \(event)" }
            return "text " + FrameMatcher.preview(payload, limit: 40)
        case .binary:
            return "binary \(payload.count) bytes"
        default:
            return opcode.name
        }
    }

    public static func summary(_ frame: FrameRecord) -> String { summary(opcode: frame.opcode, payload: frame.payload) }
    public static func summary(_ frame: Frame) -> String { summary(opcode: frame.opcode, payload: frame.payload) }

    /// One line for people: `conn 3 +1.204s  different  text bird:subscribe: data.channel: "b" (recorded "a")`,
    /// prefixed with `copy N` when several copies ran.
    public var text: String { text(showingCopy: false) }

    /// With `showingClient`, the line starts with the client id (`client-2 conn 7 ...`).
    public func text(showingCopy: Bool, showingClient: Bool = false) -> String {
        var line = "conn \(conn)"
        if showingClient, let client { line = client + " " + line }
        if showingCopy { line = "copy \(copy) " + line }
        line += " +" + Self.seconds(t) + "s  " + kind.rawValue
        switch kind {
        case .missing, .missingConnection: line += "  " + (expected ?? "")
        case .extra, .extraConnection: line += "  " + (observed ?? "")
        case .otherOrder: line += "  " + (observed ?? expected ?? "") + " arrived before earlier recorded frames"
        case .different, .differentEnd, .handshake:
            line += "  " + (observed ?? "") + " (recorded " + (expected ?? "nothing") + ")"
        }
        if !details.isEmpty { line += ": " + details.joined(separator: "; ") }
        return line
    }

    public var json: JSONValue {
        var members: [(key: String, value: JSONValue)] = [
            ("kind", .string(kind.rawValue)), ("copy", .int(Int64(copy))), ("conn", .int(Int64(conn))),
            ("t", .double(Double(t) / 1_000_000)),
        ]
        if let client { members.append(("client", .string(client))) }
        if let event { members.append(("event", .string(event))) }
        if let expected { members.append(("expected", .string(expected))) }
        if let observed { members.append(("observed", .string(observed))) }
        if !details.isEmpty { members.append(("details", .array(details.map { .string($0) }))) }
        return .object(JSONObject(members))
    }

    static func seconds(_ t: Micros) -> String {
        let millis = max(0, t) / 1000
        let fraction = String(millis % 1000)
        return "\(millis / 1000).\(String(repeating: "0", count: 3 - fraction.count))\(fraction)"
    }
}
