import Capture
import Analysis
import Lifecycle
import ProtocolTable
import Protocols
import Vocabulary
import WebSocket

/// The protocol a replay's recordings speak: the protocol-table entry that names each
/// frame's event and says what it means (its kind). Through it the replay tells the
/// connection's own exchanges (handshake, subscriptions, pings) from the events a server
/// pushes and the ones other clients cause, finds the live connection's socket id, and
/// knows which fields differ between runs, all without knowing which protocol it plays.
public struct ReplayProtocol: Sendable {
    /// The entry's table key ("bird", "websocket").
    public let key: String
    /// Why this entry was chosen, for the operator ("detected on conn 1: ...").
    public let reason: String
    private let make: @Sendable () -> any WireProtocol

    public init(key: String, reason: String, make: @escaping @Sendable () -> any WireProtocol) {
        self.key = key
        self.reason = reason
        self.make = make
    }

    /// The entry `name` (a key or alias) of `table`; nil when the table has none.
    public static func named(_ name: String, prefix: String? = nil, table: ProtocolTable = .standard) -> ReplayProtocol? {
        guard let registration = table.registration(named: name) else { return nil }
        return ReplayProtocol(key: registration.key, reason: "given") { registration.make(prefix) }
    }

    /// The entry that detection chooses on the recordings, as `analyze` chooses one on a
    /// capture (their first upgrade request, then their first messages); the table's
    /// fallback when none claims them.
    public static func detect(in recordings: [RecordedConnection], table: ProtocolTable = .standard) -> ReplayProtocol {
        let detection = detection(on: recordings, table: table)
        let key = detection.choice?.key ?? ProtocolTable.fallbackSpec
        let registration = table.registration(named: key) ?? table.registration(named: ConnectionLevelProtocol.key)
        let reason = detection.choice.map { "detected: \($0.reason)" } ?? "the default: no entry of the protocol table recognized the recordings"
        return ReplayProtocol(key: registration?.key ?? ConnectionLevelProtocol.key, reason: reason) {
            registration?.make(nil) ?? ConnectionLevelProtocol()
        }
    }

    /// The entry of the spec the capture was recorded under (`proxy --spec`, written in its
    /// header): the one the relay decoded with. Nil without one, or when it does not load.
    public static func recorded(under recorded: RecordedSpec?, table: ProtocolTable = .standard) -> ReplayProtocol? {
        guard let recorded, let spec = try? SpecLoader.load(recorded.name),
              let registration = table.registration(named: spec.events.rawValue) else { return nil }
        return ReplayProtocol(key: registration.key, reason: "the spec the capture was recorded under, \(recorded.name)") {
            registration.make(spec.prefix)
        }
    }

    /// The recordings whose own upgrade request and first messages choose another entry
    /// than `shared` (a mixed capture's connections speak different protocols), each with
    /// that entry; a recording detection decides nothing on keeps `shared` (the entry of the
    /// selection, or of the spec).
    public static func detectEach(in recordings: [RecordedConnection], shared: ReplayProtocol,
                                  table: ProtocolTable = .standard) -> [ConnectionID: ReplayProtocol] {
        var own: [ConnectionID: ReplayProtocol] = [:]
        for recording in recordings {
            let detection = detection(on: [recording], table: table)
            guard let choice = detection.choice, choice.key != shared.key,
                  let registration = table.registration(named: choice.key) else { continue }
            own[recording.conn] = ReplayProtocol(key: registration.key, reason: "detected on conn \(recording.conn): \(choice.reason)") {
                registration.make(nil)
            }
        }
        return own
    }

    /// Detection offered the recordings' upgrade requests and frames in order, until it decides.
    private static func detection(on recordings: [RecordedConnection], table: ProtocolTable) -> EntryDetection {
        var detection = EntryDetection(table: table)
        offering: for recording in recordings {
            if let request = recording.request, detection.offer(.upgrade(request)) { break offering }
            for frame in recording.frames where detection.offer(.frame(frame)) { break offering }
        }
        return detection
    }

    /// A fresh instance, for one connection (each learns its own dialect).
    public func instance() -> any WireProtocol { make() }

    /// The entry's fields that differ between runs (`MatchRules`' defaults).
    public var volatileFields: VolatileFields { type(of: make()).volatileFields }
}

/// A frame as a replay classifies and reports it: the name of the event it carries (the
/// entry's decoded event), else its opcode's ("close", "binary", "text" for text that is
/// no event), and the event's kind.
struct FrameEvent: Sendable, Hashable {
    var name: String
    var kind: RealtimeEventKind?
    var socketID: String?

    /// Decodes a complete message with `wire`, the connection's instance (it learns the
    /// dialect from the messages in order).
    init(opcode: Opcode, payload: [UInt8], wire: inout any WireProtocol) {
        if opcode == .text, let event = wire.decode(payload) {
            name = event.name
            kind = event.kind
            socketID = event.kind == .connectionEstablished ? event.socketID : nil
        } else {
            name = opcode.name
        }
    }
}
