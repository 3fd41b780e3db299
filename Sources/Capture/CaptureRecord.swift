import JSON
import Vocabulary
import WebSocket

/// One line of a capture file. The same values flow from the proxy, from pcap decoding and
/// from the simulator into the analyzer: there is no second model.
///
/// The cases larger than a frame, all rare (one header per capture, one upgrade per
/// connection and side), are boxed: a record is as large as its largest case, and with
/// them inline every frame's record was 168 bytes where it needs 65, and moved that much
/// each time it went on from the reader to the router.
public enum CaptureRecord: Sendable, Hashable {
    indirect case header(CaptureHeader)
    case open(OpenRecord)
    indirect case upgrade(UpgradeRecord)
    /// Every frame, close frames included (they are written with type `close`).
    case frame(FrameRecord)
    case end(EndRecord)
    indirect case fault(FaultRecord)
    case note(NoteRecord)
    /// Forward mode: an opaque tunnel's open and end.
    indirect case tunnel(TunnelRecord)
    /// Forward mode: a plain HTTP exchange.
    indirect case http(HTTPRecord)

    /// The record's time, or nil for the header.
    public var time: Micros? {
        switch self {
        case .header: nil
        case .open(let r): r.t
        case .upgrade(let r): r.t
        case .frame(let r): r.t
        case .end(let r): r.t
        case .fault(let r): r.t
        case .note(let r): r.t
        case .tunnel(let r): r.t
        case .http(let r): r.t
        }
    }

    /// The connection the record belongs to, if any.
    public var connection: ConnectionID? {
        switch self {
        case .header: nil
        case .open(let r): r.conn
        case .upgrade(let r): r.conn
        case .frame(let r): r.conn
        case .end(let r): r.conn
        case .fault(let r): r.conn
        case .note(let r): r.conn
        case .tunnel(let r): r.conn
        case .http(let r): r.conn
        }
    }
}

/// First line of every capture: what wrote it, when, and with which settings.
public struct CaptureHeader: Sendable, Hashable {
    public static let formatName = "faultline-capture"
    public static let currentVersion = 1

    public var version: Int
    /// "faultline 0.1.0"
    public var tool: String
    /// Wall-clock start, microseconds since the Unix epoch; every `t` is relative to it.
    public var startedAt: Int64
    /// Who produced the records: "proxy", "pcap", "sim", "replay".
    public var source: String
    /// Free-form settings of the producer (listen address, upstream, fault rules, input file).
    public var settings: JSONObject
    /// A rotated recording's id, the same in every part (`--rotate`); nil for a single file.
    public var recording: String?
    /// A rotated recording's part number, from 1; nil for a single file.
    public var part: Int?
    /// The lifecycle spec the capture was recorded under; nil when it carries none (every
    /// capture written before the key existed, and a proxy run without spec options).
    public var spec: RecordedSpec?

    public init(version: Int = CaptureHeader.currentVersion, tool: String, startedAt: Int64,
                source: String, settings: JSONObject = JSONObject(), recording: String? = nil, part: Int? = nil) {
        self.version = version
        self.tool = tool
        self.startedAt = startedAt
        self.source = source
        self.settings = settings
        self.recording = recording
        self.part = part
    }
}

/// A TCP connection from a client was accepted (or, from pcap, a SYN was seen).
public struct OpenRecord: Sendable, Hashable {
    public var conn: ConnectionID
    public var t: Micros
    /// The client's address, "127.0.0.1:50123" or "[::1]:50123".
    public var client: String
    /// The server's address as the client addressed it (the proxy's listener, or pcap's destination).
    public var server: String
    /// Where the proxy forwards to, when different from `server`.
    public var upstream: String?

    public init(conn: ConnectionID, t: Micros, client: String, server: String, upstream: String? = nil) {
        self.conn = conn
        self.t = t
        self.client = client
        self.server = server
        self.upstream = upstream
    }
}

/// The HTTP/1.1 upgrade request (from the client) or response (from the server).
public struct UpgradeRecord: Sendable, Hashable {
    public var conn: ConnectionID
    public var t: Micros
    /// `.client` for the request, `.server` for the response.
    public var from: Side
    /// Request only: "GET".
    public var method: String?
    /// Request only: path and query as sent, "/app/key?protocol=7".
    public var target: String?
    /// Response only: 101 on success.
    public var status: Int?
    /// Response only: the reason phrase.
    public var reason: String?
    public var headers: [HeaderField]

    public init(conn: ConnectionID, t: Micros, from: Side, method: String? = nil, target: String? = nil,
                status: Int? = nil, reason: String? = nil, headers: [HeaderField]) {
        self.conn = conn
        self.t = t
        self.from = from
        self.method = method
        self.target = target
        self.status = status
        self.reason = reason
        self.headers = headers
    }

    /// The first value of a header, matched case-insensitively (by Unicode lowercase).
    ///
    /// Two ASCII names (every HTTP field name) are compared byte by byte ignoring ASCII case,
    /// which for ASCII is the same answer: lowercasing both for every header was some 4,000
    /// instructions a lookup, and client grouping looks up User-Agent on every connection.
    /// A name with any other byte is lowercased as before (a Kelvin sign lowercases to `k`).
    public func header(_ name: String) -> String? {
        let nameIsASCII = name.isASCIIOnly
        return headers.first { field in
            if nameIsASCII, field.name.isASCIIOnly { return field.name.equalsIgnoringASCIICase(name) }
            return field.name.lowercased() == name.lowercased()
        }?.value
    }
}

/// What the proxy did with a frame.
public enum FrameAction: Sendable, Hashable {
    /// Relayed to the other side as it came.
    case forwarded
    /// Swallowed by a fault; the other side never saw it.
    case dropped
    /// Relayed after a fault held it back for this long.
    case delayed(Micros)
    /// Not sent by either peer: made up by the proxy (a fault, or its own close).
    case injected
    /// Seen only (pcap input, or a replay's expectations): nobody relayed it.
    case observed

    public var name: String {
        switch self {
        case .forwarded: "forwarded"
        case .dropped: "dropped"
        case .delayed: "delayed"
        case .injected: "injected"
        case .observed: "observed"
        }
    }
}

/// One WebSocket frame (close frames included), with its exact payload.
///
/// Laid out small (64 bytes): a frame is nearly every record, and each is moved from the
/// reader through the router to its client's timeline several times. The properties are
/// stored widest first, the six flags are bits of one byte, and the three strings few
/// frames carry (`protocolError`, `fault`, `sha256`: 48 bytes inline) share one box.
public struct FrameRecord: Sendable, Hashable {
    public var conn: ConnectionID
    public var t: Micros
    /// Payload bytes on the wire (before inflation, when compressed).
    public var length: Int
    /// The payload: unmasked, and inflated when `compressed` is true.
    public var payload: [UInt8]
    public var action: FrameAction
    /// Who sent it. An injected frame is "from" the side it pretends to be.
    public var from: Side
    public var opcode: Opcode
    /// `fin`, `rsv1`, `rsv2`, `rsv3`, `masked` and `compressed`, one bit each (six `Bool`s
    /// would take the record past 64 bytes).
    @usableFromInline var flags: FrameFlags
    @usableFromInline var notes: FrameNotes
    /// The frame's protocol event, decoded once where the record was made (the relay), so
    /// faults, the live view and the live analysis read it instead of parsing the payload
    /// again. In memory only: not written to the capture line, and not part of equality.
    /// `.notDecoded` for records read from a file: readers decode then.
    public var decoded: DecodedEvent = .notDecoded

    public var fin: Bool { get { flags[.fin] } set { flags[.fin] = newValue } }
    public var rsv1: Bool { get { flags[.rsv1] } set { flags[.rsv1] = newValue } }
    public var rsv2: Bool { get { flags[.rsv2] } set { flags[.rsv2] = newValue } }
    public var rsv3: Bool { get { flags[.rsv3] } set { flags[.rsv3] = newValue } }
    public var masked: Bool { get { flags[.masked] } set { flags[.masked] = newValue } }
    /// The payload was a permessage-deflate message and is stored inflated.
    public var compressed: Bool { get { flags[.compressed] } set { flags[.compressed] = newValue } }

    /// The RFC 6455 violation the frame carried, if any (relayed anyway unless --strict).
    public var protocolError: String? {
        get { notes.protocolError }
        set { notes = FrameNotes(protocolError: newValue, fault: notes.fault, sha256: notes.sha256) }
    }

    /// The fault rule that touched this frame, if any.
    public var fault: String? {
        get { notes.fault }
        set { notes = FrameNotes(protocolError: notes.protocolError, fault: newValue, sha256: notes.sha256) }
    }

    /// Set for a large frame the proxy passed through as it arrived instead of keeping it
    /// whole: the SHA-256 of its whole payload (lower-case hex); `payload` then holds only
    /// its first bytes (a bounded prefix) and `length` the full length.
    public var sha256: String? {
        get { notes.sha256 }
        set { notes = FrameNotes(protocolError: notes.protocolError, fault: notes.fault, sha256: newValue) }
    }

    /// Inlinable: pcap decoding builds one per frame, and as a call into this module the
    /// initializer copied and then released every argument. `sha256` is set here too (the
    /// capture decoders read it) rather than after: delegating to this initializer and then
    /// setting it built the record twice, a copy and a destroy of it per decoded frame.
    @inlinable
    public init(conn: ConnectionID, t: Micros, from: Side, opcode: Opcode, fin: Bool = true,
                rsv1: Bool = false, rsv2: Bool = false, rsv3: Bool = false, masked: Bool,
                length: Int? = nil, payload: [UInt8], compressed: Bool = false,
                action: FrameAction = .forwarded, protocolError: String? = nil, fault: String? = nil,
                sha256: String? = nil) {
        self.conn = conn
        self.t = t
        self.from = from
        self.opcode = opcode
        self.flags = FrameFlags(fin: fin, rsv1: rsv1, rsv2: rsv2, rsv3: rsv3, masked: masked, compressed: compressed)
        self.length = length ?? payload.count
        self.payload = payload
        self.action = action
        self.notes = FrameNotes(protocolError: protocolError, fault: fault, sha256: sha256)
    }

    /// The close code of a close frame with a body of two bytes or more.
    public var closeCode: UInt16? {
        guard opcode == .close, payload.count >= 2 else { return nil }
        return UInt16(payload[0]) << 8 | UInt16(payload[1])
    }

    /// The close reason of a close frame, decoded leniently.
    public var closeReason: String? {
        guard opcode == .close, payload.count >= 2 else { return nil }
        return String(decoding: payload[2...], as: UTF8.self)
    }

    /// The payload as text when it is valid UTF-8.
    public var text: String? { String(validating: payload, as: UTF8.self) }
}

/// A frame's six flags in one byte (`FrameRecord`).
@usableFromInline
struct FrameFlags: OptionSet, Sendable, Hashable {
    @usableFromInline var rawValue: UInt8
    @inlinable init(rawValue: UInt8) { self.rawValue = rawValue }

    @usableFromInline static let fin = FrameFlags(rawValue: 1)
    @usableFromInline static let rsv1 = FrameFlags(rawValue: 2)
    @usableFromInline static let rsv2 = FrameFlags(rawValue: 4)
    @usableFromInline static let rsv3 = FrameFlags(rawValue: 8)
    @usableFromInline static let masked = FrameFlags(rawValue: 16)
    @usableFromInline static let compressed = FrameFlags(rawValue: 32)

    @inlinable init(fin: Bool, rsv1: Bool, rsv2: Bool, rsv3: Bool, masked: Bool, compressed: Bool) {
        rawValue = (fin ? 1 : 0) | (rsv1 ? 2 : 0) | (rsv2 ? 4 : 0) | (rsv3 ? 8 : 0) | (masked ? 16 : 0) | (compressed ? 32 : 0)
    }

    /// Whether `flag` is set; setting it to false clears it.
    @inlinable subscript(flag: FrameFlags) -> Bool {
        get { contains(flag) }
        set { if newValue { insert(flag) } else { remove(flag) } }
    }
}

/// A frame's rarely set strings, boxed together (`FrameRecord`): nothing for the frames
/// that carry none, which is nearly all of them.
@usableFromInline
enum FrameNotes: Sendable, Hashable {
    case none
    indirect case some(protocolError: String?, fault: String?, sha256: String?)

    @inlinable
    init(protocolError: String?, fault: String?, sha256: String?) {
        self = protocolError == nil && fault == nil && sha256 == nil
            ? .none : .some(protocolError: protocolError, fault: fault, sha256: sha256)
    }

    @inlinable var protocolError: String? {
        if case .some(let error, _, _) = self { error } else { nil }
    }

    @inlinable var fault: String? {
        if case .some(_, let fault, _) = self { fault } else { nil }
    }

    @inlinable var sha256: String? {
        if case .some(_, _, let sha256) = self { sha256 } else { nil }
    }
}

/// How one side's TCP stream ended.
public enum EndKind: String, Sendable, Hashable {
    /// An orderly FIN (or EOF on read).
    case fin
    /// A reset.
    case rst
    /// A socket error other than a reset (timeout, unreachable).
    case error
    /// The capture ended while the connection was still open.
    case captureEnd = "capture-end"
}

/// One of the two TCP connections of a proxied pair.
public enum Leg: String, Sendable, Hashable {
    /// Between the client and the proxy.
    case client
    /// Between the proxy and the upstream server.
    case upstream

    /// The leg whose peer is `side` (the client's leg for the client, the upstream's for the server).
    public init(peer side: Side) { self = side == .client ? .client : .upstream }
    /// The real peer at the far end of this leg.
    public var peer: Side { self == .client ? .client : .server }
}

/// One side's TCP stream ended.
public struct EndRecord: Sendable, Hashable {
    public var conn: ConnectionID
    public var t: Micros
    /// The side whose stream ended (who sent the FIN or RST), as the leg's peer saw it: on the
    /// client's leg, `server` is the proxy ending the stream to the client on the server's
    /// behalf; on the upstream leg, `client` is the proxy ending it to the server.
    public var side: Side
    public var kind: EndKind
    public var detail: String?
    /// The TCP connection it happened on (the proxy records both legs); nil where there is
    /// one connection only (a pcap, a capture from before legs were recorded).
    public var leg: Leg?

    public init(conn: ConnectionID, t: Micros, side: Side, kind: EndKind, detail: String? = nil, leg: Leg? = nil) {
        self.conn = conn
        self.t = t
        self.side = side
        self.kind = kind
        self.detail = detail
        self.leg = leg
    }

    /// Whether the proxy, not the real peer, sent this FIN or RST.
    public var byProxy: Bool { leg.map { $0.peer != side } ?? false }
    /// Whether the client saw it: an end on the client's leg (or on the only connection there is).
    public var seenByClient: Bool { leg != .upstream }
}

/// The proxy injected a fault.
public struct FaultRecord: Sendable, Hashable {
    /// Nil for a fault not tied to one connection (a rule added, a refusal before a connection id).
    public var conn: ConnectionID?
    public var t: Micros
    /// The rule as written by the user: "close:4009,after=30s".
    public var rule: String
    /// The fault kind: "close", "stall-pongs", "drop", ...
    public var kind: String
    /// Which side the fault acted on, if one.
    public var target: Side?
    /// What it did, for a person: "sent close 4009 'terminated' to client".
    public var detail: String

    public init(conn: ConnectionID?, t: Micros, rule: String, kind: String, target: Side? = nil, detail: String) {
        self.conn = conn
        self.t = t
        self.rule = rule
        self.kind = kind
        self.target = target
        self.detail = detail
    }
}

/// Something the producer wants the reader to know: a protocol error that ended a
/// connection, a pcap gap, a reassembly limit. Never silently dropped.
public struct NoteRecord: Sendable, Hashable {
    public enum Level: String, Sendable, Hashable { case info, warning, error }

    public var conn: ConnectionID?
    public var t: Micros
    public var level: Level
    public var message: String

    public init(conn: ConnectionID?, t: Micros, level: Level, message: String) {
        self.conn = conn
        self.t = t
        self.level = level
        self.message = message
    }
}

/// Anything that yields capture records in time order: a capture file reader, pcap
/// decoding, a live proxy. The analyzer and `faultline frames` consume this, never a file.
public protocol RecordSource {
    /// The header describing the records (synthesized for pcap input).
    var header: CaptureHeader { get }
    /// The next record, or nil at the end. Throws `CaptureError` for unusable input.
    mutating func next() throws -> CaptureRecord?
    /// Problems met that did not stop reading (a torn last line, a pcap gap), for the user.
    var warnings: [String] { get }
    /// Where the analysis hands back each record's payload once it is done with it, when
    /// this source decodes on worker threads: freed there, the memory goes back to the
    /// thread that allocates the next payloads. Nil (the default) for every other source.
    var spentPayloads: SpentPayloads? { get }
}

extension RecordSource {
    public var spentPayloads: SpentPayloads? { nil }
}
