import Lifecycle
import Vocabulary

/// The report logs' entries in the form the builder keeps them while the input is read: at
/// 2,000 clients with every log full (a long capture), these lists are the largest part of
/// the heap at its peak. Each entry is fixed-size and has no field the log already knows
/// (its client) and no padding of optionals: a transition takes 48 bytes where a
/// `Transition` takes 128, a connection bar 56 where a `ConnectionLifespan` takes 80. The
/// report keeps them as they are (`ReportClients`, `ReportFindings`): its own types are
/// made from them one client at a time as the report is written.
extension ReportBuilder {
    /// A transition without its client and evidence (no report shows the evidence), its
    /// states as numbers into the builder's `NameTable`, whether it has a connection told
    /// by the top bit of `to` (an optional connection took 16 bytes: 40 bytes an entry, not 48).
    struct KeptTransition: Sendable {
        var cause: String
        var t: Micros
        var conn: ConnectionID
        /// `NameTable.none` for no state (the client's first transition).
        var from: UInt32
        /// The state's number, and `hasConnection`.
        private var toAndFlag: UInt32

        static let hasConnection: UInt32 = 1 << 31

        init(_ transition: Transition, cause: String, names: inout NameTable) {
            self.cause = cause
            t = transition.t
            from = transition.from.map { names.number(of: $0) } ?? NameTable.none
            conn = transition.conn ?? 0
            toAndFlag = names.number(of: transition.to) | (transition.conn == nil ? 0 : Self.hasConnection)
        }

        var to: UInt32 {
            get { toAndFlag & ~Self.hasConnection }
            set { toAndFlag = (newValue & ~Self.hasConnection) | (toAndFlag & Self.hasConnection) }
        }

        func transition(of client: String, names: NameTable) -> Transition {
            Transition(client: client, conn: toAndFlag & Self.hasConnection == 0 ? nil : conn, t: t,
                       from: from == NameTable.none ? nil : names.name(of: from),
                       to: names.name(of: to), cause: cause, evidence: nil)
        }
    }

    /// A connection bar without its client, its optional times and close told by flags.
    struct KeptConnection: Sendable {
        var end: String?
        var conn: ConnectionID
        var openedAt: Micros
        var connectedAt: Micros
        var endedAt: Micros
        var closeCode: UInt16
        var flags: Flags

        struct Flags: OptionSet, Sendable {
            let rawValue: UInt8
            static let connected = Flags(rawValue: 1)
            static let ended = Flags(rawValue: 2)
            static let closeCode = Flags(rawValue: 4)
            static let closedByClient = Flags(rawValue: 8)
            static let closedByServer = Flags(rawValue: 16)
        }

        init(_ bar: ConnectionLifespan, end: String?) {
            self.end = end
            conn = bar.conn
            openedAt = bar.openedAt
            connectedAt = bar.connectedAt ?? 0
            endedAt = bar.endedAt ?? 0
            closeCode = bar.closeCode ?? 0
            var flags: Flags = []
            if bar.connectedAt != nil { flags.insert(.connected) }
            if bar.endedAt != nil { flags.insert(.ended) }
            if bar.closeCode != nil { flags.insert(.closeCode) }
            switch bar.closedBy {
            case .client: flags.insert(.closedByClient)
            case .server: flags.insert(.closedByServer)
            case nil: break
            }
            self.flags = flags
        }

        func lifespan(of client: String) -> ConnectionLifespan {
            var bar = ConnectionLifespan(conn: conn, client: client, openedAt: openedAt)
            bar.connectedAt = flags.contains(.connected) ? connectedAt : nil
            bar.endedAt = flags.contains(.ended) ? endedAt : nil
            bar.closeCode = flags.contains(.closeCode) ? closeCode : nil
            bar.closedBy = flags.contains(.closedByClient) ? .client : flags.contains(.closedByServer) ? .server : nil
            bar.end = end
            return bar
        }
    }
}

extension ReportBuilder {
    /// A finding without its client (the log's), its texts and evidence in one allocation:
    /// a `Finding` is its message, its evidence array and each evidence's summary, three to
    /// five heap blocks of their own besides its 112 bytes, and at 2,000 clients with their
    /// logs full (a long capture) some 20,000 findings are kept. The rule's name is the
    /// rule's own text, shared by all its findings. The bytes are allocated at their exact
    /// size (grown by appends they sat in room for up to twice as many: 5.6 MB at 1 GB of
    /// synthetic capture), and hold the finding's connection and time too (an entry of 32
    /// bytes, not 48).
    struct KeptFinding: Sendable {
        var rule: String
        /// The connection, the time, the message, the fault notes and the evidence,
        /// written by `FindingBytes`.
        var bytes: [UInt8]
        var severity: Severity
        var party: Party

        init(_ finding: Finding) {
            rule = finding.rule
            severity = finding.severity
            party = finding.party
            var size = 8 + 8 + FindingBytes.size(finding.message) + FindingBytes.size(finding.causedByFault)
                + FindingBytes.size(finding.afterFault) + 8
            for e in finding.evidence { size += 8 + 8 + 1 + FindingBytes.size(e.summary) }
            var out = FindingBytes.Writer(capacity: size)
            out.integer(Int64(finding.conn))
            out.integer(finding.t)
            out.text(finding.message)
            out.optionalText(finding.causedByFault)
            out.optionalText(finding.afterFault)
            out.count(finding.evidence.count)
            for e in finding.evidence {
                out.integer(Int64(e.conn))
                out.integer(e.t)
                out.side(e.from)
                out.text(e.summary)
            }
            bytes = out.bytes
        }

        func finding(of client: String) -> Finding {
            var input = FindingBytes.Reader(bytes)
            let conn = ConnectionID(truncatingIfNeeded: input.integer())
            let t = input.integer()
            let message = input.text()
            let causedByFault = input.optionalText()
            let afterFault = input.optionalText()
            let count = input.count()
            var evidence: [Evidence] = []
            evidence.reserveCapacity(count)
            for _ in 0..<count {
                guard !input.atEnd else { break }
                let conn = ConnectionID(truncatingIfNeeded: input.integer())
                let t = input.integer()
                let from = input.side()
                evidence.append(Evidence(conn: conn, t: t, from: from, summary: input.text()))
            }
            return Finding(rule: rule, severity: severity, party: party, client: client, conn: conn, t: t,
                           message: message, evidence: evidence, causedByFault: causedByFault, afterFault: afterFault)
        }
    }
}

/// The byte form of a kept finding's texts and evidence: lengths and numbers little-endian
/// and fixed-size, texts as their UTF-8. Written and read only by `KeptFinding`, so the
/// reader trusts the layout; it still stops at the end of the bytes rather than read past.
enum FindingBytes {
    /// The bytes `Writer.text` or `optionalText` takes for `text`.
    static func size(_ text: String) -> Int { 8 + text.utf8.count }
    static func size(_ text: String?) -> Int { 1 + (text.map(size) ?? 0) }

    struct Writer {
        var bytes: [UInt8] = []

        /// A writer whose bytes are allocated once, at `capacity` (the exact size to be written).
        init(capacity: Int) { bytes.reserveCapacity(capacity) }

        mutating func integer(_ value: Int64) {
            withUnsafeBytes(of: value.littleEndian) { bytes.append(contentsOf: $0) }
        }

        mutating func count(_ n: Int) { integer(Int64(n)) }

        mutating func text(_ text: String) {
            count(text.utf8.count)
            bytes.append(contentsOf: text.utf8)
        }

        mutating func optionalText(_ text: String?) {
            bytes.append(text == nil ? 0 : 1)
            if let text { self.text(text) }
        }

        mutating func side(_ side: Side?) {
            bytes.append(side.map { $0 == .client ? 1 : 2 } ?? 0)
        }
    }

    struct Reader {
        private let bytes: [UInt8]
        private var at = 0

        init(_ bytes: [UInt8]) { self.bytes = bytes }

        var atEnd: Bool { at >= bytes.count }

        mutating func byte() -> UInt8 {
            guard at < bytes.count else { return 0 }
            defer { at += 1 }
            return bytes[at]
        }

        mutating func integer() -> Int64 {
            var value: UInt64 = 0
            for shift in stride(from: 0, to: 64, by: 8) { value |= UInt64(byte()) << UInt64(shift) }
            return Int64(bitPattern: value)
        }

        /// A count or length, never more than the bytes left.
        mutating func count() -> Int {
            let n = integer()
            return n < 0 ? 0 : Int(min(n, Int64(bytes.count - min(at, bytes.count))))
        }

        mutating func text() -> String {
            let n = count()
            defer { at += n }
            return String(decoding: bytes[at..<(at + n)], as: UTF8.self)
        }

        mutating func optionalText() -> String? { byte() == 0 ? nil : text() }

        mutating func side() -> Side? {
            switch byte() {
            case 1: .client
            case 2: .server
            default: nil
            }
        }
    }
}

/// The state names transitions carry, each numbered once. They are the names of the specs
/// that judged the clients (a handful each; the engine's own `StateTable` numbers at most
/// 65,536), so the table holds as many names as those specs have, whatever the input: a
/// number stays below 2^31, whose bit `KeptTransition` uses for a flag.
struct NameTable: Sendable {
    /// The number that stands for no name.
    static let none = UInt32.max
    private var names: [String] = []
    private var numbers: [String: UInt32] = [:]

    mutating func number(of name: String) -> UInt32 {
        if let n = numbers[name] { return n }
        let n = UInt32(truncatingIfNeeded: names.count)
        names.append(name)
        numbers[name] = n
        return n
    }

    func name(of number: UInt32) -> String { names[Int(number)] }

    /// Both tables of names combined: `other`'s numbers become `renumbered[n]` here.
    mutating func adopt(_ other: NameTable) -> [UInt32] {
        other.names.map { number(of: $0) }
    }
}
