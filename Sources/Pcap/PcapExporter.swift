import Capture
import Vocabulary
import WebSocket

/// Writes capture records as a pcapng of synthetic TCP (raw IP link type) that Wireshark and
/// tshark open, faithful to what crossed the wire: a proxy capture's connection becomes two
/// TCP conversations, the client's leg (client <-> proxy) and the upstream leg (proxy <->
/// server), each carrying only what went over it. A frame a fault dropped appears on the
/// leg it arrived on and not on the other; a frame the proxy injected appears only on the
/// leg it was sent on; a delayed frame appears on its arrival leg when it arrived and on the
/// other when it was released. Every packet a fault touched carries a pcapng comment naming
/// the fault and what it did (Wireshark's `frame.comment`). Input with one connection only
/// (a pcap, frames that were only observed) gives one conversation, as recorded.
///
/// Per conversation: a three-way handshake, the HTTP upgrade, every frame re-encoded with
/// the proxy's `FrameEncoder` (client frames masked with a key derived from the connection
/// and frame number, so exports repeat byte for byte), and FIN or RST per end record.
/// Sequence and acknowledgement numbers are consistent. Addresses: the client's leg runs
/// between the recorded client and listening addresses; the upstream leg between the
/// proxy's address on it and the upstream (the `upstream leg` note a proxy writes when it
/// connects; made up, with a warning, for captures without one).
///
/// Compressed frames (stored inflated) are deflated again with the negotiated parameters;
/// the bytes differ from the original wire bytes, so their length may too, but the inflated
/// message is the same.
///
/// Memory is bounded by the connections open at once, not by the capture: a deflater is
/// made only for a direction that sends a compressed frame, and a connection's state goes
/// once every leg it has is closed both ways (records for it after that are counted in a
/// warning, not written).
public struct PcapExporter {
    /// Bytes per synthetic TCP segment.
    public static let segmentSize = 32 * 1024

    struct ExportDirection {
        var endpoint: Endpoint
        var seq: UInt32
        /// The connection negotiated permessage-deflate when this leg was open.
        var compresses = false
        /// Made on the first compressed frame, dropped when the direction ends.
        var deflater: MessageDeflater?
        /// Frames of a compressed message waiting for its final frame (their deflated bytes
        /// are only known once the whole message is).
        var heldFrames: [FrameRecord] = []
        var ended = false

        /// Nothing more is sent this way: the compressor and any unfinished message go.
        mutating func end() {
            ended = true
            deflater = nil
            heldFrames = []
        }
    }

    /// One TCP connection: a leg of a proxied pair, or the only connection there is.
    struct Conversation {
        var client: ExportDirection
        var server: ExportDirection
        subscript(side: Side) -> ExportDirection {
            get { side == .client ? client : server }
            set { if side == .client { client = newValue } else { server = newValue } }
        }
    }

    struct Connection {
        var open: OpenRecord?
        var legs: [Leg: Conversation] = [:]
        var frameNumber: UInt64 = 0
        /// The client's upgrade request, to send upstream once the upstream leg opens.
        var request: UpgradeRecord?
        /// The upstream leg's ends, from the proxy's note: (proxy's address, upstream's).
        var upstreamAddresses: (String, String)?
        /// The proxy answered the upgrade itself (a refusal fault, an unreachable upstream):
        /// no upstream leg.
        var noUpstream = false
        var deflate: DeflateParameters?

        /// Every leg closed both ways (and no upstream leg still to come): nothing more
        /// can be written for this connection.
        func isOver(twoLegs: Bool) -> Bool {
            guard !legs.isEmpty, legs.values.allSatisfy({ $0.client.ended && $0.server.ended }) else { return false }
            return !twoLegs || legs[.upstream] != nil || noUpstream
        }
    }

    private let writer: PcapngWriter
    private var startedAt: Int64 = 0
    /// The input is a proxy's capture, whose connections have two legs; any other input
    /// (a pcap, a synthetic capture) saw one connection, written as one conversation.
    private var twoLegs = false
    private var connections: [ConnectionID: Connection] = [:]
    /// Connections whose state is gone (see `Connection.isOver`), and how many records
    /// came for them afterwards.
    private var over: Set<ConnectionID> = []
    private var recordsAfterEnd = 0
    public private(set) var packetCount = 0
    public private(set) var frameCount = 0
    public private(set) var warnings: [String] = []

    public init(path: String) throws(PcapError) {
        writer = try PcapngWriter(path: path)
    }

    /// Writes every record of `source`, then closes the file.
    public mutating func export<S: RecordSource>(_ source: inout S) throws {
        startedAt = source.header.startedAt
        twoLegs = source.header.source == "proxy"
        while let record = try source.next() {
            add(record)
        }
        finish()
        warnings = source.warnings + warnings
    }

    /// Closes the file; `warnings` is complete after this.
    public mutating func finish() {
        writer.close()
        if recordsAfterEnd > 0 {
            warnings.append("\(recordsAfterEnd) record(s) came after their connection had ended on every leg; they are not in the export")
        }
    }

    /// Connections and deflaters held now (for tests and the `export` fuzz target: both
    /// fall to zero as connections end).
    public var connectionsHeld: Int { connections.count }
    var deflatersHeld: Int {
        connections.values.reduce(0) { total, connection in
            total + connection.legs.values.reduce(0) { $0 + ($1.client.deflater == nil ? 0 : 1) + ($1.server.deflater == nil ? 0 : 1) }
        }
    }

    public mutating func add(_ record: CaptureRecord) {
        if let conn = record.connection, over.contains(conn) {
            // An open record starts a connection afresh under its id, as it always did.
            guard case .open = record else { recordsAfterEnd += 1; return }
            over.remove(conn)
        }
        switch record {
        case .header(let header):
            startedAt = header.startedAt
            twoLegs = header.source == "proxy"
        case .open(let open):
            var connection = Connection(open: open)
            connection.legs[.client] = Self.conversation(open.conn, leg: .client, client: open.client, server: open.server,
                                                          warnings: &warnings)
            connections[open.conn] = connection
            handshake(open.conn, leg: .client, in: &connection, t: open.t)
            connections[open.conn] = connection
        case .upgrade(let upgrade):
            var connection = connectionFor(upgrade.conn, t: upgrade.t)
            let head = Self.serialize(upgrade)
            if upgrade.from == .client {
                connection.request = upgrade
                send(head, from: .client, leg: .client, in: &connection, t: upgrade.t)
            } else {
                if upgrade.status == 101 { connection.deflate = DeflateParameters.negotiated(in: upgrade.headers) }
                if openUpstream(upgrade.conn, in: &connection, t: upgrade.t) {
                    send(head, from: .server, leg: .upstream, in: &connection, t: upgrade.t)
                }
                send(head, from: .server, leg: .client, in: &connection, t: upgrade.t)
                // Compression applies to the legs open now; each direction's deflater is
                // made when it first sends a compressed frame.
                if upgrade.status == 101, connection.deflate != nil {
                    for leg in [Leg.client, .upstream] where connection.legs[leg] != nil {
                        connection.legs[leg]?.client.compresses = true
                        connection.legs[leg]?.server.compresses = true
                    }
                }
            }
            connections[upgrade.conn] = connection
        case .frame(let frame):
            var connection = connectionFor(frame.conn, t: frame.t)
            frameCount += 1
            connection.frameNumber += 1
            let comment = Self.comment(for: frame)
            let arrival = Leg(peer: frame.from), departure = Leg(peer: frame.from.other)
            switch frame.action {
            case _ where !twoLegs:
                writeFrame(frame, leg: .client, in: &connection, t: frame.t, comment: comment)
            case .observed:
                writeFrame(frame, leg: .client, in: &connection, t: frame.t, comment: nil)
            case .forwarded:
                writeFrame(frame, leg: arrival, in: &connection, t: frame.t, comment: nil)
                writeFrame(frame, leg: departure, in: &connection, t: frame.t, comment: nil)
            case .delayed(let delay):
                let (arrived, overflow) = frame.t.subtractingReportingOverflow(max(0, delay))
                writeFrame(frame, leg: arrival, in: &connection, t: overflow ? frame.t : arrived, comment: comment)
                writeFrame(frame, leg: departure, in: &connection, t: frame.t, comment: comment)
            case .dropped:
                writeFrame(frame, leg: arrival, in: &connection, t: frame.t, comment: comment)
            case .injected:
                writeFrame(frame, leg: departure, in: &connection, t: frame.t, comment: comment)
            }
            connections[frame.conn] = connection
        case .end(let end):
            guard var connection = connections[end.conn] else { return }
            let leg = twoLegs ? end.leg ?? Self.legacyLeg(of: end) : .client
            if leg == .upstream, end.kind == .error, connection.legs[.upstream] == nil {
                connection.noUpstream = true   // the upstream was never reached
                connections[end.conn] = connection
                return
            }
            guard var conversation = connection.legs[leg], !conversation[end.side].ended else { return }
            let comment = end.byProxy || (end.leg == nil && (end.detail ?? "").contains("(fault "))
                ? "faultline: \(end.kind == .fin ? "FIN" : "RST") \(end.detail ?? "sent by the proxy")" : nil
            switch end.kind {
            case .fin:
                segment(from: end.side, in: &conversation, flags: [.fin, .ack], payload: [], t: end.t, comment: comment)
                conversation[end.side].seq &+= 1
                conversation[end.side].end()
            case .rst, .error:
                segment(from: end.side, in: &conversation, flags: [.rst, .ack], payload: [], t: end.t, comment: comment)
                conversation[end.side].end()
            case .captureEnd:
                break
            }
            connection.legs[leg] = conversation
            if connection.isOver(twoLegs: twoLegs) {
                connections[end.conn] = nil
                over.insert(end.conn)
            } else {
                connections[end.conn] = connection
            }
        case .fault(let fault):
            // A refusal answered by the proxy itself: nothing goes upstream.
            if let conn = fault.conn, fault.kind == "refuse" || fault.kind == "refuse-http",
               var connection = connections[conn], connection.legs[.upstream] == nil {
                connection.noUpstream = true
                connections[conn] = connection
            }
        case .note(let note):
            guard let conn = note.conn, let leg = note.upstreamLeg, var connection = connections[conn] else { return }
            connection.upstreamAddresses = leg
            _ = openUpstream(conn, in: &connection, t: note.t)
            connections[conn] = connection
        case .tunnel, .http:
            break
        }
    }

    /// Which leg an end record without one is on: an old capture's ends the proxy sent name
    /// the peer in their detail; the others are the peer's own.
    static func legacyLeg(of end: EndRecord) -> Leg {
        let detail = end.detail ?? ""
        if detail.hasPrefix("sent by the proxy to the client") { return .client }
        if detail.hasPrefix("sent by the proxy to the server") { return .upstream }
        return Leg(peer: end.side)
    }

    /// The pcapng comment for a frame a fault (or the proxy) touched; nil for one relayed as is.
    static func comment(for frame: FrameRecord) -> String? {
        let by = frame.fault.map { "fault \($0)" } ?? "the proxy"
        let kind = frame.fault.map { String($0.prefix { $0 != ":" && $0 != "," }) } ?? ""
        let rewrites = kind == "strip-socket-id" || kind == "activity-timeout"
        let other = frame.from.other.rawValue
        switch frame.action {
        case .forwarded, .observed:
            return nil
        case .dropped:
            return rewrites ? "faultline: rewritten by \(by): this original was not passed on to the \(other)"
                : "faultline: dropped by \(by): not passed on to the \(other)"
        case .injected:
            return rewrites ? "faultline: rewritten by \(by): sent to the \(other) in place of the original"
                : "faultline: injected by \(by): made up, not sent by the \(frame.from.rawValue)"
        case .delayed(let delay):
            return "faultline: delayed \(Double(delay) / 1000) ms by \(by)"
        }
    }

    // MARK: - Connections

    static func conversation(_ id: ConnectionID, leg: Leg, client: String, server: String,
                             warnings: inout [String]) -> Conversation {
        var clientEnd = Endpoint(parsing: client), serverEnd = Endpoint(parsing: server)
        if clientEnd == nil || serverEnd == nil || clientEnd?.address.isIPv6 != serverEnd?.address.isIPv6 {
            let made = leg == .client ? "10.0.0.1 and 10.0.0.2" : "10.0.0.2 and 10.0.0.3"
            if !client.isEmpty || !server.isEmpty {
                warnings.append("connection \(id): \(leg == .client ? "" : "upstream leg: ")addresses '\(client)' and '\(server)' are not IP:port pairs of one family; using \(made)")
            }
            // Wrapping arithmetic: any id has a port (ids near Int.max included).
            clientEnd = leg == .client ? Endpoint(IPAddress(ipv4: 0x0A00_0001), UInt16(truncatingIfNeeded: 40000 &+ id))
                : Endpoint(IPAddress(ipv4: 0x0A00_0002), UInt16(truncatingIfNeeded: 50000 + id % 10000))
            serverEnd = leg == .client ? Endpoint(IPAddress(ipv4: 0x0A00_0002), 80) : Endpoint(IPAddress(ipv4: 0x0A00_0003), 80)
        }
        // Fixed initial sequence numbers, so an export is reproducible.
        let base = UInt32(truncatingIfNeeded: id) &* 0x10000 &+ (leg == .client ? 0 : 0x0800_0000)
        return Conversation(client: ExportDirection(endpoint: clientEnd!, seq: 0x1000_0000 &+ base),
                            server: ExportDirection(endpoint: serverEnd!, seq: 0x8000_0000 &+ base))
    }

    /// The three-way handshake of a leg.
    private mutating func handshake(_ id: ConnectionID, leg: Leg, in connection: inout Connection, t: Micros) {
        guard var conversation = connection.legs[leg] else { return }
        segment(from: .client, in: &conversation, flags: [.syn], payload: [], t: t, comment: nil)
        conversation.client.seq &+= 1
        segment(from: .server, in: &conversation, flags: [.syn, .ack], payload: [], t: t, comment: nil)
        conversation.server.seq &+= 1
        segment(from: .client, in: &conversation, flags: [.ack], payload: [], t: t, comment: nil)
        connection.legs[leg] = conversation
    }

    /// Opens the upstream leg (handshake, then the client's request as it went upstream)
    /// unless it is open or the proxy answered itself; whether the leg exists.
    private mutating func openUpstream(_ id: ConnectionID, in connection: inout Connection, t: Micros) -> Bool {
        if connection.legs[.upstream] != nil { return true }
        guard twoLegs, !connection.noUpstream, let open = connection.open else { return false }
        let (local, remote) = connection.upstreamAddresses ?? ("", open.upstream ?? "")
        if connection.upstreamAddresses == nil, local.isEmpty {
            // An older capture: the proxy's port on the upstream leg was not recorded.
            let listen = Endpoint(parsing: open.server)
            let upstream = Endpoint(parsing: remote)
            if let listen, let upstream, listen.address.isIPv6 == upstream.address.isIPv6 {
                connection.legs[.upstream] = Conversation(
                    client: ExportDirection(endpoint: Endpoint(listen.address, UInt16(truncatingIfNeeded: 50000 + id % 10000)),
                                      seq: 0x1800_0000 &+ UInt32(truncatingIfNeeded: id) &* 0x10000),
                    server: ExportDirection(endpoint: upstream, seq: 0x8800_0000 &+ UInt32(truncatingIfNeeded: id) &* 0x10000))
            }
        }
        if connection.legs[.upstream] == nil {
            connection.legs[.upstream] = Self.conversation(id, leg: .upstream, client: local, server: remote, warnings: &warnings)
        }
        handshake(id, leg: .upstream, in: &connection, t: t)
        if var request = connection.request {
            if let index = request.headers.firstIndex(where: { $0.name.lowercased() == "host" }), let upstream = open.upstream {
                request.headers[index].value = upstream
            }
            send(Self.serialize(request), from: .client, leg: .upstream, in: &connection, t: t)
        }
        return true
    }

    /// A connection whose open record is missing (a torn capture start) gets made up addresses.
    private mutating func connectionFor(_ id: ConnectionID, t: Micros) -> Connection {
        if let connection = connections[id] { return connection }
        add(.open(OpenRecord(conn: id, t: t, client: "", server: "")))
        connections[id]?.open = nil
        return connections[id]!
    }

    // MARK: - Frames

    private mutating func writeFrame(_ record: FrameRecord, leg: Leg, in connection: inout Connection, t: Micros,
                                     comment: String?) {
        if leg == .upstream { _ = openUpstream(record.conn, in: &connection, t: t) }
        guard var conversation = connection.legs[leg] else { return }
        defer { connection.legs[leg] = conversation }
        let side = record.from
        let frameNumber = connection.frameNumber
        if record.compressed, conversation[side].compresses, conversation[side].deflater == nil, let deflate = connection.deflate {
            conversation[side].deflater = side == .client
                ? MessageDeflater(windowBits: deflate.clientMaxWindowBits, noContextTakeover: deflate.clientNoContextTakeover)
                : MessageDeflater(windowBits: deflate.serverMaxWindowBits, noContextTakeover: deflate.serverNoContextTakeover)
        }
        guard record.compressed, let deflater = conversation[side].deflater else {
            let frame = Frame(fin: record.fin, rsv1: record.rsv1, rsv2: record.rsv2, rsv3: record.rsv3, opcode: record.opcode,
                              maskingKey: record.masked ? key(frameNumber, record.conn) : nil, payload: record.payload)
            send(FrameEncoder.encode(frame), from: side, in: &conversation, t: t, comment: comment)
            return
        }
        conversation[side].heldFrames.append(record)
        guard record.fin else { return }
        // The whole message: deflate it once, then hand the bytes out over its frames.
        let held = conversation[side].heldFrames
        conversation[side].heldFrames = []
        let message = held.flatMap(\.payload)
        let deflated = deflater.deflate(message)
        var offset = 0
        for (i, part) in held.enumerated() {
            let isLast = i == held.count - 1
            let count = isLast ? deflated.count - offset : min(part.length, deflated.count - offset)
            let frame = Frame(fin: part.fin, rsv1: i == 0, rsv2: part.rsv2, rsv3: part.rsv3, opcode: part.opcode,
                              maskingKey: part.masked ? key(frameNumber + UInt64(i), part.conn) : nil,
                              payload: Array(deflated[offset ..< offset + count]))
            offset += count
            send(FrameEncoder.encode(frame), from: side, in: &conversation, t: t, comment: comment)
        }
    }

    /// A masking key from the connection and frame number (SplitMix64), never random.
    private func key(_ frame: UInt64, _ conn: ConnectionID) -> MaskingKey {
        var z = frame &* 0x9E37_79B9_7F4A_7C15 &+ UInt64(truncatingIfNeeded: conn) &* 0xBF58_476D_1CE4_E5B9
        z = (z ^ (z >> 30)) &* 0xBF58_476D_1CE4_E5B9
        z = (z ^ (z >> 27)) &* 0x94D0_49BB_1331_11EB
        z ^= z >> 31
        return MaskingKey(UInt8(truncatingIfNeeded: z), UInt8(truncatingIfNeeded: z >> 8),
                          UInt8(truncatingIfNeeded: z >> 16), UInt8(truncatingIfNeeded: z >> 24))
    }

    // MARK: - Packets

    private mutating func send(_ bytes: [UInt8], from side: Side, leg: Leg, in connection: inout Connection, t: Micros) {
        guard var conversation = connection.legs[leg] else { return }
        send(bytes, from: side, in: &conversation, t: t, comment: nil)
        connection.legs[leg] = conversation
    }

    /// Sends stream bytes from `side`, cut into segments.
    private mutating func send(_ bytes: [UInt8], from side: Side, in conversation: inout Conversation, t: Micros,
                               comment: String?) {
        var offset = 0
        while offset < bytes.count {
            let end = min(bytes.count, offset + Self.segmentSize)
            segment(from: side, in: &conversation, flags: [.ack, .psh], payload: Array(bytes[offset..<end]), t: t,
                    comment: comment)
            conversation[side].seq &+= UInt32(end - offset)
            offset = end
        }
    }

    private mutating func segment(from side: Side, in conversation: inout Conversation, flags: TCPSegment.Flags,
                                  payload: [UInt8], t: Micros, comment: String?) {
        let me = conversation[side], peer = conversation[side.other]
        let packet = PacketBuilder.tcp(from: me.endpoint, to: peer.endpoint, seq: me.seq,
                                       ack: flags == [.syn] ? 0 : peer.seq, flags: flags, payload: payload)
        // Record times are within ±2^62 µs, but a header's start time is not bounded.
        let (time, overflow) = startedAt.addingReportingOverflow(t)
        writer.write(packet, time: overflow ? t : time, comment: comment)
        packetCount += 1
    }

    // MARK: - HTTP

    /// The upgrade head as it was on the wire: request or status line, headers, blank line,
    /// written by the one head writer (so no recorded control character splits it).
    static func serialize(_ upgrade: UpgradeRecord) -> [UInt8] {
        if upgrade.from == .client {
            return HTTPRequestHead(method: upgrade.method ?? "GET", target: upgrade.target ?? "/", headers: upgrade.headers).serialized
        }
        return HTTPResponseHead(status: upgrade.status ?? 101, reason: upgrade.reason ?? "Switching Protocols",
                                headers: upgrade.headers).serialized
    }
}
