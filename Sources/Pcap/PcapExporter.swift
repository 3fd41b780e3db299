import Capture
import WebSocket

/// Writes capture records as a pcap of synthetic TCP (raw IP link type) that Wireshark and
/// tshark open: a three-way handshake per open record, the HTTP upgrade, every frame
/// re-encoded with the proxy's `FrameEncoder` (client frames masked with a key derived from
/// the connection and frame number, so exports repeat byte for byte), and FIN or RST per
/// end record. Sequence and acknowledgement numbers are consistent.
///
/// Compressed frames (stored inflated) are deflated again with the negotiated parameters;
/// the bytes differ from the original wire bytes, so their length may too, but the inflated
/// message is the same.
public struct PcapExporter {
    /// Bytes per synthetic TCP segment.
    public static let segmentSize = 32 * 1024

    struct Direction {
        var endpoint: Endpoint
        var seq: UInt32
        var deflater: MessageDeflater?
        /// Frames of a compressed message waiting for its final frame (their deflated bytes
        /// are only known once the whole message is).
        var heldFrames: [FrameRecord] = []
        var ended = false
    }

    struct Connection {
        var client: Direction
        var server: Direction
        var frameNumber: UInt64 = 0
        subscript(side: Side) -> Direction {
            get { side == .client ? client : server }
            set { if side == .client { client = newValue } else { server = newValue } }
        }
    }

    private let writer: PcapWriter
    private var startedAt: Int64 = 0
    private var connections: [ConnectionID: Connection] = [:]
    public private(set) var packetCount = 0
    public private(set) var frameCount = 0
    public private(set) var warnings: [String] = []

    public init(path: String) throws(PcapError) {
        writer = try PcapWriter(path: path, link: .raw)
    }

    /// Writes every record of `source`, then closes the file.
    public mutating func export<S: RecordSource>(_ source: inout S) throws {
        startedAt = source.header.startedAt
        while let record = try source.next() {
            add(record)
        }
        writer.close()
        warnings = source.warnings + warnings
    }

    public mutating func add(_ record: CaptureRecord) {
        switch record {
        case .header(let header):
            startedAt = header.startedAt
        case .open(let open):
            openConnection(open.conn, client: open.client, server: open.server, t: open.t)
        case .upgrade(let upgrade):
            var connection = connectionFor(upgrade.conn, t: upgrade.t)
            let head = Self.serialize(upgrade)
            if upgrade.from == .server, upgrade.status == 101, let deflate = DeflateParameters.negotiated(in: upgrade.headers) {
                connection.client.deflater = MessageDeflater(windowBits: deflate.clientMaxWindowBits,
                                                             noContextTakeover: deflate.clientNoContextTakeover)
                connection.server.deflater = MessageDeflater(windowBits: deflate.serverMaxWindowBits,
                                                             noContextTakeover: deflate.serverNoContextTakeover)
            }
            send(head, from: upgrade.from, in: &connection, t: upgrade.t)
            connections[upgrade.conn] = connection
        case .frame(let frame):
            var connection = connectionFor(frame.conn, t: frame.t)
            frameCount += 1
            writeFrame(frame, in: &connection)
            connections[frame.conn] = connection
        case .end(let end):
            guard var connection = connections[end.conn], !connection[end.side].ended else { return }
            switch end.kind {
            case .fin:
                segment(from: end.side, in: &connection, flags: [.fin, .ack], payload: [], t: end.t)
                connection[end.side].seq &+= 1
                connection[end.side].ended = true
            case .rst, .error:
                segment(from: end.side, in: &connection, flags: [.rst, .ack], payload: [], t: end.t)
                connection[end.side].ended = true
            case .captureEnd:
                break
            }
            connections[end.conn] = connection
        case .fault, .note, .tunnel, .http:
            break
        }
    }

    // MARK: - Connections

    private mutating func openConnection(_ id: ConnectionID, client: String, server: String, t: Micros) {
        var clientEnd = Endpoint(parsing: client), serverEnd = Endpoint(parsing: server)
        if clientEnd == nil || serverEnd == nil || clientEnd?.address.isIPv6 != serverEnd?.address.isIPv6 {
            warnings.append("connection \(id): addresses '\(client)' and '\(server)' are not IP:port pairs of one family; using 10.0.0.1 and 10.0.0.2")
            clientEnd = Endpoint(IPAddress(ipv4: 0x0A00_0001), UInt16(truncatingIfNeeded: 40000 + id))
            serverEnd = Endpoint(IPAddress(ipv4: 0x0A00_0002), 80)
        }
        guard let clientEnd, let serverEnd else { return }
        // Fixed initial sequence numbers, so an export is reproducible.
        var connection = Connection(
            client: Direction(endpoint: clientEnd, seq: 0x1000_0000 &+ UInt32(truncatingIfNeeded: id) &* 0x10000),
            server: Direction(endpoint: serverEnd, seq: 0x8000_0000 &+ UInt32(truncatingIfNeeded: id) &* 0x10000))
        segment(from: .client, in: &connection, flags: [.syn], payload: [], t: t)
        connection.client.seq &+= 1
        segment(from: .server, in: &connection, flags: [.syn, .ack], payload: [], t: t)
        connection.server.seq &+= 1
        segment(from: .client, in: &connection, flags: [.ack], payload: [], t: t)
        connections[id] = connection
    }

    /// A connection whose open record is missing (a torn capture start) gets made up addresses.
    private mutating func connectionFor(_ id: ConnectionID, t: Micros) -> Connection {
        if let connection = connections[id] { return connection }
        openConnection(id, client: "", server: "", t: t)
        return connections[id]!
    }

    // MARK: - Frames

    private mutating func writeFrame(_ record: FrameRecord, in connection: inout Connection) {
        let side = record.from
        connection.frameNumber += 1
        guard record.compressed, let deflater = connection[side].deflater else {
            let frame = Frame(fin: record.fin, rsv1: record.rsv1, rsv2: record.rsv2, rsv3: record.rsv3, opcode: record.opcode,
                              maskingKey: record.masked ? key(connection.frameNumber, record.conn) : nil, payload: record.payload)
            send(FrameEncoder.encode(frame), from: side, in: &connection, t: record.t)
            return
        }
        connection[side].heldFrames.append(record)
        guard record.fin else { return }
        // The whole message: deflate it once, then hand the bytes out over its frames.
        let held = connection[side].heldFrames
        connection[side].heldFrames = []
        let message = held.flatMap(\.payload)
        let deflated = deflater.deflate(message)
        var offset = 0
        for (i, part) in held.enumerated() {
            let isLast = i == held.count - 1
            let count = isLast ? deflated.count - offset : min(part.length, deflated.count - offset)
            let frame = Frame(fin: part.fin, rsv1: i == 0, rsv2: part.rsv2, rsv3: part.rsv3, opcode: part.opcode,
                              maskingKey: part.masked ? key(connection.frameNumber + UInt64(i), part.conn) : nil,
                              payload: Array(deflated[offset ..< offset + count]))
            offset += count
            send(FrameEncoder.encode(frame), from: side, in: &connection, t: record.t)
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

    /// Sends stream bytes from `side`, cut into segments.
    private mutating func send(_ bytes: [UInt8], from side: Side, in connection: inout Connection, t: Micros) {
        var offset = 0
        while offset < bytes.count {
            let end = min(bytes.count, offset + Self.segmentSize)
            segment(from: side, in: &connection, flags: [.ack, .psh], payload: Array(bytes[offset..<end]), t: t)
            connection[side].seq &+= UInt32(end - offset)
            offset = end
        }
    }

    private mutating func segment(from side: Side, in connection: inout Connection, flags: TCPSegment.Flags,
                                  payload: [UInt8], t: Micros) {
        let me = connection[side], peer = connection[side.other]
        let packet = PacketBuilder.tcp(from: me.endpoint, to: peer.endpoint, seq: me.seq,
                                       ack: flags == [.syn] ? 0 : peer.seq, flags: flags, payload: payload)
        writer.write(packet, time: startedAt + t)
        packetCount += 1
    }

    // MARK: - HTTP

    /// The upgrade head as it was on the wire: request or status line, headers, blank line.
    static func serialize(_ upgrade: UpgradeRecord) -> [UInt8] {
        var text: String
        if upgrade.from == .client {
            text = "\(upgrade.method ?? "GET") \(upgrade.target ?? "/") HTTP/1.1\r\n"
        } else {
            text = "HTTP/1.1 \(upgrade.status ?? 101) \(upgrade.reason ?? "Switching Protocols")\r\n"
        }
        for field in upgrade.headers { text += "\(field.name): \(field.value)\r\n" }
        text += "\r\n"
        return Array(text.utf8)
    }
}
