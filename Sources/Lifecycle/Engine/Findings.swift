import Capture
import Vocabulary
import WebSocket

/// How bad a finding is. `error` findings make `analyze` exit 1.
public enum Severity: String, Sendable, Hashable, Comparable {
    case warning, error
    public static func < (a: Severity, b: Severity) -> Bool { a == .warning && b == .error }
}

/// Whose behaviour a rule judges: the client library under test, or the server.
public enum Party: String, Sendable, Hashable { case client, server }

/// One frame or wire event a finding or transition rests on, summarized for reports.
public struct Evidence: Sendable, Hashable {
    public var conn: ConnectionID
    public var t: Micros
    /// Who sent it; nil for events with no sender (the capture ending).
    public var from: Side?
    /// "text bird:ping", "close 4201 'pong timeout'", "RST", "upgrade 101".
    public var summary: String

    public init(conn: ConnectionID, t: Micros, from: Side?, summary: String) {
        self.conn = conn
        self.t = t
        self.from = from
        self.summary = summary
    }
}

/// A rule violated by one client at one time.
public struct Finding: Sendable, Hashable {
    public var rule: String
    public var severity: Severity
    public var party: Party
    public var client: String
    public var conn: ConnectionID
    public var t: Micros
    /// One line with the measured value against the bound.
    public var message: String
    public var evidence: [Evidence]
    /// The injected fault that explains it (the proxy's rule text): set only by a rule that
    /// knows the fault made the judged party look at fault, such as a pong swallowed by
    /// `stall-pongs` behind `server.pong-missing`, or a handshake rewritten by
    /// `strip-socket-id` behind `server.handshake-missing-id`.
    public var causedByFault: String?
    /// An injected fault that came before the finding on its connection (or ended the
    /// connection before it) without explaining it: the client's reaction to a fault is
    /// the client's own behaviour, so it is shown as "after injected fault X", never as
    /// caused by it. Nil when `causedByFault` is set.
    public var afterFault: String?

    /// How reports mention a fault beside the finding: "caused by injected fault X",
    /// "after injected fault X", or nil.
    public var faultNote: String? {
        if let fault = causedByFault { return "caused by injected fault \(fault)" }
        if let fault = afterFault { return "after injected fault \(fault)" }
        return nil
    }

    public init(rule: String, severity: Severity, party: Party, client: String, conn: ConnectionID, t: Micros,
                message: String, evidence: [Evidence], causedByFault: String? = nil, afterFault: String? = nil) {
        self.rule = rule
        self.severity = severity
        self.party = party
        self.client = client
        self.conn = conn
        self.t = t
        self.message = message
        self.evidence = evidence
        self.causedByFault = causedByFault
        self.afterFault = afterFault
    }
}

/// A client's state change, with the wire event that caused it.
public struct Transition: Sendable, Hashable {
    public var client: String
    public var conn: ConnectionID?
    public var t: Micros
    public var from: String?
    public var to: String
    /// "tcp open", "handshake socket_id 1.2", "close 4009 from server".
    public var cause: String
    public var evidence: Evidence? {
        get { boxedEvidence?.evidence }
        set { boxedEvidence = newValue.map(EvidenceBox.init) }
    }
    /// The evidence behind one reference: held inline it took 40 of a transition's 128
    /// bytes, and a report of 2,000 clients of a long capture holds 80,000 transitions
    /// (reports keep none of their evidence; the live view reads it). 96 bytes now.
    private var boxedEvidence: EvidenceBox?

    public init(client: String, conn: ConnectionID?, t: Micros, from: String?, to: String, cause: String, evidence: Evidence?) {
        self.client = client
        self.conn = conn
        self.t = t
        self.from = from
        self.to = to
        self.cause = cause
        self.boxedEvidence = evidence.map(EvidenceBox.init)
    }
}

/// A transition's evidence, compared and hashed by its value.
private final class EvidenceBox: Sendable, Hashable {
    let evidence: Evidence
    init(_ evidence: Evidence) { self.evidence = evidence }
    static func == (a: EvidenceBox, b: EvidenceBox) -> Bool { a.evidence == b.evidence }
    func hash(into hasher: inout Hasher) { hasher.combine(evidence) }
}

/// A connection's life as reports draw it: a bar from open to end, with its close.
public struct ConnectionLifespan: Sendable, Hashable {
    public var conn: ConnectionID
    public var client: String
    public var openedAt: Micros
    public var connectedAt: Micros?
    public var endedAt: Micros?
    public var closeCode: UInt16?
    public var closedBy: Side?
    /// "close 4201 from client", "RST from server", "capture end".
    public var end: String?

    public init(conn: ConnectionID, client: String, openedAt: Micros) {
        self.conn = conn
        self.client = client
        self.openedAt = openedAt
    }
}

/// A fault the proxy injected, attached to the client it hit.
public struct FaultMark: Sendable, Hashable {
    public var client: String
    public var conn: ConnectionID?
    public var t: Micros
    public var rule: String
    public var detail: String
    public init(client: String, conn: ConnectionID?, t: Micros, rule: String, detail: String) {
        self.client = client
        self.conn = conn
        self.t = t
        self.rule = rule
        self.detail = detail
    }
}

/// A client as grouped: its id, the key that grouped it, and why.
public struct ClientInfo: Sendable, Hashable {
    public var id: String
    /// The grouping key's value: "127.0.0.1 | sim/1.0 | /app/key?protocol=7".
    public var key: String
    public var firstSeen: Micros
    public init(id: String, key: String, firstSeen: Micros) {
        self.id = id
        self.key = key
        self.firstSeen = firstSeen
    }
}

/// What the analyzer reports as it goes: consumed live by the proxy, collected by reports.
public enum AnalysisEvent: Sendable, Hashable {
    /// A new client was found (first connection grouped under a new id).
    case client(ClientInfo)
    /// A connection was assigned to a client.
    case connection(ConnectionID, client: String)
    case transition(Transition)
    case finding(Finding)
    /// A connection ended (or the capture did): its bar for the timeline.
    case connectionEnded(ConnectionLifespan)
    case fault(FaultMark)
    /// At the end of the input: a check still open, neither passed nor failed.
    case undetermined(Undetermined)
}
