import Capture
import ProtocolTable
import Protocols
import Vocabulary

/// With no spec named, which protocol table entry an input speaks, and so which built-in
/// spec judges it: the first client upgrade request and the first complete text messages
/// are offered to the table's detector (`ProtocolDetector`), in record order. `analyze`
/// and `proxy --live` use it and say what they chose and why.
///
/// Bounded: it looks at no more than `recordLimit` records, then gives up, and the caller
/// keeps `ProtocolTable.fallbackSpec`.
public struct EntryDetection: Sendable {
    /// Records looked at before giving up (the upgrade and first messages come early).
    public static let recordLimit = 1024

    public let table: ProtocolTable
    private var detector: ProtocolDetector
    private var upgradeOffered = false
    private var recordsSeen = 0
    /// The connection whose upgrade or message made the choice.
    public private(set) var chosenOn: ConnectionID?

    public init(table: ProtocolTable = .standard) {
        self.table = table
        detector = table.detector()
    }

    /// True once an entry was chosen or detection gave up.
    public var decided: Bool { detector.decided || recordsSeen >= Self.recordLimit }
    public var choice: ProtocolDetector.Choice? { detector.choice }

    /// Offers one record; returns `decided`.
    @discardableResult
    public mutating func offer(_ record: CaptureRecord) -> Bool {
        guard !decided else { return true }
        recordsSeen += 1
        switch record {
        case .upgrade(let upgrade) where upgrade.from == .client && !upgradeOffered:
            // The first request stands for the input (clients of one input speak alike).
            guard let target = upgrade.target else { break }
            upgradeOffered = true
            if detector.offer(upgrade: UpgradeEvidence(target: target, headers: upgrade.headers)) != nil { chosenOn = upgrade.conn }
        case .frame(let frame) where frame.opcode == .text && frame.fin && frame.sha256 == nil:
            if detector.offer(message: frame.payload) != nil { chosenOn = frame.conn }
        default:
            break
        }
        return decided
    }

    /// The built-in spec for the choice: the chosen entry's, else the fallback.
    public var specName: String {
        choice.flatMap { table.registration(named: $0.key)?.defaultSpec } ?? ProtocolTable.fallbackSpec
    }

    /// "spec bird: protocol bird chosen on conn 1: REASON", or why the fallback is used.
    /// Text from the input is in it (an event name): escape it for the sink it goes to.
    public var line: String {
        guard let choice else {
            return "spec \(specName) (the default): no entry of the protocol table recognized the first upgrade "
                + "request or the first \(ProtocolDetector.messageLimit) messages; --spec chooses"
        }
        let on = chosenOn.map { " on conn \($0)" } ?? ""
        return "spec \(specName): protocol \(choice.key) chosen\(on): \(choice.reason); --spec overrides"
    }
}

/// A record source with records read ahead (for detection) handed on first, in order,
/// then the rest of `base`: the input is read once, streaming.
public struct ReadAheadSource: RecordSource {
    private var base: any RecordSource
    private var ahead: [CaptureRecord]
    private var position = 0

    /// Reads `base` until `detection` decides (or `base` ends), keeping what it read.
    public init(_ base: any RecordSource, detecting detection: inout EntryDetection) throws {
        self.base = base
        ahead = []
        while !detection.decided, let record = try self.base.next() {
            ahead.append(record)
            detection.offer(record)
        }
    }

    public var header: CaptureHeader { base.header }
    public var warnings: [String] { base.warnings }
    public var spentPayloads: SpentPayloads? { base.spentPayloads }
    /// The source read through, for what only it can tell (a pcap's traffic inventory).
    public var underlying: any RecordSource { base }

    public mutating func next() throws -> CaptureRecord? {
        guard position < ahead.count else { return try base.next() }
        let record = ahead[position]
        position += 1
        if position == ahead.count { (ahead, position) = ([], 0) }  // the memory goes back at once
        return record
    }
}
