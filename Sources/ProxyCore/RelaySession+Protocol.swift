import Capture
import ProtocolTable
import Protocols

/// A connection's protocol detection in progress: the table to choose from, its detector,
/// and whether the upgrade request was offered yet.
struct ProtocolDetection: Sendable {
    let table: ProtocolTable
    var detector: ProtocolDetector
    var offeredUpgrade = false

    init(table: ProtocolTable) {
        self.table = table
        detector = table.detector()
    }
}

/// The event decoding of the relay: each complete text message decoded once, through the
/// connection's protocol table entry, for the record to carry to the faults, the live view
/// and the live analysis. With no entry given, the entry is chosen here through the table
/// (the upgrade request first, then the first messages) and the choice is recorded.
extension RelaySession {
    /// Bounds the event decoding: events are small, and faults never looked past this.
    static let maxDecodedPayload = 64 * 1024

    /// The event of a complete text message, decoded once for the record to carry.
    mutating func decodeEvent(of record: FrameRecord) -> DecodedEvent {
        guard record.opcode == .text, record.fin, record.sha256 == nil,
              record.payload.count <= Self.maxDecodedPayload else { return .notDecoded }
        if wire == nil { detect(from: record.payload) }
        guard var wire else { return .notDecoded }
        let event = wire.decode(record.payload)
        self.wire = wire
        return .decoded(protocolKey: type(of: wire).key, event: event)
    }

    /// Records that leave undecoded (injected by faults, rewritten) get their event here,
    /// so every frame record the relay makes carries one; then the protocol choice made
    /// while handling this event, if any, is recorded.
    mutating func decodeEvents(in out: inout [RelayCommand]) {
        if wire != nil || detection != nil {
            for index in out.indices {
                guard case .record(.frame(var record)) = out[index], !record.decoded.isDecoded,
                      record.opcode == .text, record.fin else { continue }
                record.decoded = decodeEvent(of: record)
                out[index] = .record(.frame(record))
            }
        }
        announceChoice(into: &out)
    }

    /// Offers the upgrade request (once) and this message to the detector; takes the
    /// chosen entry when it chooses.
    private mutating func detect(from payload: [UInt8]) {
        guard var detection, !detection.detector.decided else { return }
        if !detection.offeredUpgrade, let request {
            detection.offeredUpgrade = true
            detection.detector.offer(upgrade: UpgradeEvidence(target: request.target, headers: request.headers))
        }
        if detection.detector.choice == nil { detection.detector.offer(message: payload) }
        if let choice = detection.detector.choice { wire = detection.table.entry(for: choice.key) }
        self.detection = detection
    }

    /// Records the choice once it is made ("protocol bird: a message is ..."), or that
    /// detection gave up, as an info note; then detection is over.
    private mutating func announceChoice(into out: inout [RelayCommand]) {
        guard let detection, detection.detector.decided else { return }
        self.detection = nil
        out.append(note(.info, ProtocolChoiceNote.message(detection.detector.choice), now: clock))
    }
}

/// The info note a relay records when detection chose a connection's protocol entry (or
/// gave up): `protocol bird: a message is the Pusher-protocol event bird:connection_established`.
/// The live view shows it; analyzers skip info notes.
public enum ProtocolChoiceNote {
    static let lead = "protocol "

    /// The note's text for `choice` (nil: detection gave up).
    public static func message(_ choice: ProtocolDetector.Choice?) -> String {
        guard let choice else {
            return lead + "undetected: no entry of the table recognized the upgrade or the first "
                + "\(ProtocolDetector.messageLimit) messages; events are not decoded"
        }
        return lead + "\(choice.key): \(choice.reason)"
    }

    /// Whether `note` is such a note.
    public static func matches(_ note: NoteRecord) -> Bool {
        note.level == .info && note.conn != nil && note.message.hasPrefix(lead)
    }
}
