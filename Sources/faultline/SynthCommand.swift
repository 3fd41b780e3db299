import Bird
import CLI
import Capture
import Glibc
import JSON
import ProxyShell
import Vocabulary
import WebSocket

/// `faultline synth`: writes a synthetic but realistic Bird Realtime capture. Used for the
/// sample capture, the analyzer's 1 GB benchmark and the writer's SIGKILL test (`--rate`).
/// Deterministic: the same options give the same file, byte for byte.
enum SynthCommand: Command {
    static let spec = CommandSpec(
        name: "synth",
        abstract: "Write a synthetic Bird Realtime capture.",
        discussion: """
            Simulates N clients of a Bird Realtime server: upgrades, connection_established,
            public and private subscriptions (signed with the app secret recorded in the
            header), server events, bird:ping/pong and control pings, closes with various
            codes (1000, 1001, 4009, 4100, 4201, network resets) and reconnects with jittered
            exponential backoff. Stops after --records records or --size bytes, whichever
            comes first. For load tests of whatever reads captures (analyze, frames, export,
            your own tools); --rate makes a capture that grows, like a live recording.
            """,
        options: [
            OptionSpec("out", value: "file", help: "The capture file to write.", required: true),
            OptionSpec("clients", value: "n", help: "Simultaneous clients.", default: "3"),
            OptionSpec("size", value: "bytes", help: "Stop once the file reaches this size: 500K, 200M, 1G (powers of 1024)."),
            OptionSpec("records", value: "n", help: "Stop after this many records (header not counted); default 200 unless --size is given."),
            OptionSpec("seed", value: "n", help: "Seed of the random generator; the same seed gives the same file.", default: "1"),
            OptionSpec("rate", value: "records-per-sec", help: "Write at most this many records a second (default: as fast as possible)."),
        ])

    static func run(_ arguments: ParsedArguments) throws -> Int32 {
        let out = try arguments.required("out")
        let clients = try arguments.parse("clients", as: "a whole number from 1 to 100000") { Int($0).flatMap { (1...100_000).contains($0) ? $0 : nil } } ?? 3
        let size = try arguments.parse("size", as: "a size such as 500K, 200M or 1G", parseSize)
        let seed = try arguments.parse("seed", as: "a whole number") { UInt64($0) } ?? 1
        let rate = try arguments.parse("rate", as: "a positive number") { Double($0).flatMap { $0 > 0 ? $0 : nil } }
        let records = try arguments.parse("records", as: "a whole number") { Int($0).flatMap { $0 >= 0 ? $0 : nil } }
            ?? (size == nil ? 200 : Int.max)

        var generator = SynthGenerator(clients: clients, seed: seed)
        let writer: CaptureWriter
        do {
            writer = try CaptureWriter(path: out, header: generator.header(tool: FaultlineVersion.tool))
        } catch {
            throw UsageError("\(error)")
        }
        let started = monotonicSeconds()
        var count = 0
        // Progress in bytes written, of --size when given.
        let progress = ProgressLine(label: "synth") { [writer] in (writer.bytesWritten, size) }
        defer { progress?.finish() }
        while count < records, size.map({ writer.bytesWritten < $0 }) ?? true {
            try writer.append(generator.next())
            count += 1
            progress?.tick()
            if let rate {
                let due = started + Double(count) / rate
                let now = monotonicSeconds()
                if due > now { usleep(UInt32(min((due - now) * 1_000_000, 1_000_000))) }
            }
        }
        for record in generator.finish() { try writer.append(record); count += 1 }
        try writer.close()
        Console.err("faultline synth: wrote \(count) records (\(writer.bytesWritten) bytes) to \(out)\n")
        return ExitStatus.success
    }

    /// "1G", "500M", "64K", "1000": powers of 1024.
    static func parseSize(_ text: String) -> Int64? {
        let units: [Character: Int64] = ["K": 1 << 10, "M": 1 << 20, "G": 1 << 30, "T": 1 << 40]
        var digits = text.uppercased()
        if digits.hasSuffix("B") { digits.removeLast() }
        var multiplier: Int64 = 1
        if let last = digits.last, let unit = units[last] { multiplier = unit; digits.removeLast() }
        guard let value = Double(digits), value > 0 else { return nil }
        return Int64(value * Double(multiplier))
    }

    private static func monotonicSeconds() -> Double {
        var ts = timespec()
        clock_gettime(CLOCK_MONOTONIC, &ts)
        return Double(ts.tv_sec) + Double(ts.tv_nsec) / 1e9
    }
}


/// Many simulated clients, their records merged in time order. Each client queues the
/// records of its next step (all at or after its previous ones); the client whose queue
/// starts earliest goes next. Connection ids are given when an `open` is emitted, so they
/// count from 1 in order of opening.
struct SynthGenerator {
    static let appKey = "synth-key"
    static let appSecret = "synth-secret"
    /// 2026-01-01T00:00:00Z: a fixed start keeps the output deterministic.
    static let startedAt: Int64 = 1_767_225_600_000_000

    private var rng: SeededGenerator
    private var clients: [SynthClient]
    private var nextConnection = 1
    let seed: UInt64

    init(clients count: Int, seed: UInt64) {
        self.seed = seed
        rng = SeededGenerator(seed: seed)
        clients = []
        for index in 0..<count {
            // Clients join over the first seconds, not all at once.
            let start = Micros(rng.next() % 3_000_000)
            clients.append(SynthClient(index: index, start: start))
        }
    }

    func header(tool: String) -> CaptureHeader {
        CaptureHeader(tool: tool, startedAt: Self.startedAt, source: "synth", settings: [
            "generator": "faultline synth", "seed": .int(Int64(bitPattern: seed)), "clients": .int(Int64(clients.count)),
            "app_key": .string(Self.appKey), "app_secret": .string(Self.appSecret), "protocol_prefix": "bird",
        ])
    }

    /// The next record in time order.
    mutating func next() -> CaptureRecord {
        for i in clients.indices where clients[i].pending.isEmpty { clients[i].plan(&rng) }
        // Linear scan: a heap pays off only for thousands of clients, and N stays small here.
        var best = 0
        for i in clients.indices.dropFirst() where clients[i].nextTime < clients[best].nextTime { best = i }
        return clients[best].emit(connectionCounter: &nextConnection)
    }

    /// Records closing what is still open when the capture stops.
    mutating func finish() -> [CaptureRecord] {
        let end = clients.map(\.lastTime).max() ?? 0
        return clients.compactMap { $0.connection }.sorted().flatMap { conn in
            [CaptureRecord.end(EndRecord(conn: conn, t: end, side: .client, kind: .captureEnd)),
             .end(EndRecord(conn: conn, t: end, side: .server, kind: .captureEnd))]
        }
    }
}

/// One simulated client: a queue of planned records and where it is in its lifecycle.
struct SynthClient {
    enum Phase {
        case disconnected
        case connected(socketID: String, until: Micros)
    }

    let index: Int
    var phase = Phase.disconnected
    /// Records planned but not emitted; their `conn` is filled in on emission.
    var pending: [CaptureRecord] = []
    var pendingStart = 0
    var clock: Micros
    var lastTime: Micros = 0
    var connection: ConnectionID?
    var failures = 0
    var port = 50_000

    init(index: Int, start: Micros) {
        self.index = index
        self.clock = start
    }

    var nextTime: Micros { pendingStart < pending.count ? pending[pendingStart].time ?? 0 : .max }

    mutating func emit(connectionCounter: inout Int) -> CaptureRecord {
        var record = pending[pendingStart]
        pendingStart += 1
        if pendingStart == pending.count { pending.removeAll(keepingCapacity: true); pendingStart = 0 }
        if case .open = record { connection = connectionCounter; connectionCounter += 1 }
        record = record.withConnection(connection ?? 0)
        if case .end(let end) = record, end.side == .client { connection = nil }
        lastTime = record.time ?? lastTime
        return record
    }

    // MARK: planning

    mutating func plan(_ rng: inout SeededGenerator) {
        pending.removeAll(keepingCapacity: true)
        pendingStart = 0
        switch phase {
        case .disconnected: planConnect(&rng)
        case .connected(let socketID, let until):
            if clock >= until { planClose(&rng) } else { planActivity(&rng, socketID: socketID) }
        }
    }

    private mutating func advance(_ rng: inout SeededGenerator, _ range: ClosedRange<Micros>) -> Micros {
        clock += Micros.random(in: range, using: &rng)
        return clock
    }

    private mutating func frame(_ from: Side, _ text: String, opcode: Opcode = .text) {
        pending.append(.frame(FrameRecord(conn: 0, t: clock, from: from, opcode: opcode, masked: from == .client,
                                          payload: Array(text.utf8))))
    }

    private mutating func event(_ from: Side, _ object: JSONValue) { frame(from, JSONWriter.serialize(object)) }

    private mutating func planConnect(_ rng: inout SeededGenerator) {
        port = 40_000 + Int(rng.next() % 20_000)
        let clientAddress = "10.0.\(index / 250).\(index % 250 + 2):\(port)"
        pending.append(.open(OpenRecord(conn: 0, t: clock, client: clientAddress, server: "127.0.0.1:6001")))
        let key = Base64.encode((0..<16).map { _ in UInt8.random(in: 0...255, using: &rng) })
        _ = advance(&rng, 200...900)
        pending.append(.upgrade(UpgradeRecord(
            conn: 0, t: clock, from: .client, method: "GET",
            target: "/app/\(SynthGenerator.appKey)?protocol=7&client=bird-swift&version=2.3.\(index % 4)",
            headers: [HeaderField("Host", "127.0.0.1:6001"), HeaderField("Upgrade", "websocket"),
                      HeaderField("Connection", "Upgrade"), HeaderField("Sec-WebSocket-Key", key),
                      HeaderField("Sec-WebSocket-Version", "13"), HeaderField("User-Agent", "BirdRealtime/2.3 (iOS 18.1)")])))
        _ = advance(&rng, 800...4_000)
        pending.append(.upgrade(UpgradeRecord(
            conn: 0, t: clock, from: .server, status: 101, reason: "Switching Protocols",
            headers: [HeaderField("Upgrade", "websocket"), HeaderField("Connection", "Upgrade"),
                      HeaderField("Sec-WebSocket-Accept", WebSocketHandshake.acceptKey(for: key))])))
        let socketID = "\(100_000 + rng.next() % 900_000).\(100_000 + rng.next() % 900_000)"
        _ = advance(&rng, 500...3_000)
        let established = JSONWriter.serialize(["socket_id": .string(socketID), "activity_timeout": 120])
        event(.server, ["event": "bird:connection_established", "data": .string(established)])
        // Public channel, then a private one signed for this socket.
        _ = advance(&rng, 2_000...20_000)
        event(.client, ["event": "bird:subscribe", "data": ["channel": "market-updates"]])
        let privateChannel = "private-user-\(index + 1)"
        _ = advance(&rng, 200...2_000)
        let auth = BirdAuth.channelAuth(appKey: SynthGenerator.appKey, secret: SynthGenerator.appSecret,
                                        socketID: socketID, channel: privateChannel)
        event(.client, ["event": "bird:subscribe", "data": ["channel": .string(privateChannel), "auth": .string(auth)]])
        for channel in ["market-updates", privateChannel] {
            _ = advance(&rng, 1_000...15_000)
            event(.server, ["event": "bird_internal:subscription_succeeded", "channel": .string(channel), "data": "{}"])
        }
        let lifetime = Micros.random(in: 3_000_000...90_000_000, using: &rng)
        phase = .connected(socketID: socketID, until: clock + lifetime)
    }

    private mutating func planActivity(_ rng: inout SeededGenerator, socketID: String) {
        _ = advance(&rng, 20_000...2_500_000)
        let roll = rng.next() % 100
        switch roll {
        case 0..<65:
            let price = Double(rng.next() % 1_000_000) / 100
            let data = JSONWriter.serialize([
                "symbol": .string(["BRD", "ACME", "GLOBX", "NUTS"][Int(rng.next() % 4)]),
                "price": .double(price), "volume": .int(Int64(rng.next() % 10_000)),
                "seq": .int(Int64(clock / 1000)),
            ])
            event(.server, ["event": "price-update", "channel": "market-updates", "data": .string(data)])
        case 65..<75:
            let data = JSONWriter.serialize(["from": .string(socketID), "message": .string("notification \(rng.next() % 1000)")])
            event(.server, ["event": "inbox-message", "channel": .string("private-user-\(index + 1)"), "data": .string(data)])
        case 75..<82:
            event(.client, ["event": "client-typing", "channel": .string("private-user-\(index + 1)"), "data": ["typing": true]])
        case 82..<92:
            let from: Side = roll % 2 == 0 ? .client : .server
            event(from, ["event": "bird:ping", "data": [:]])
            _ = advance(&rng, 300...40_000)
            event(from.other, ["event": "bird:pong", "data": [:]])
        default:
            frame(.server, "", opcode: .ping)
            _ = advance(&rng, 200...20_000)
            frame(.client, "", opcode: .pong)
        }
    }

    /// How a connection ends, and how long the client waits before the next one.
    private mutating func planClose(_ rng: inout SeededGenerator) {
        _ = advance(&rng, 1_000...500_000)
        let roll = rng.next() % 100
        var reconnectDelay: Micros
        switch roll {
        case 0..<30:  // the app disconnects: orderly 1000 from the client
            closeHandshake(&rng, from: .client, code: 1000, reason: "")
            failures = 0
            reconnectDelay = Micros.random(in: 1_000_000...10_000_000, using: &rng)
        case 30..<50:  // 4201: pong not received, reconnect at once
            closeHandshake(&rng, from: .server, code: 4201, reason: "Pong reply not received")
            reconnectDelay = Micros.random(in: 0...80_000, using: &rng)
        case 50..<62:  // 4009: terminated; the client fails and the app restarts it later
            closeHandshake(&rng, from: .server, code: 4009, reason: "Connection terminated")
            failures = 0
            reconnectDelay = Micros.random(in: 10_000_000...40_000_000, using: &rng)
        case 62..<75:  // 4100: over capacity, back off
            closeHandshake(&rng, from: .server, code: 4100, reason: "Over capacity")
            failures += 1
            reconnectDelay = backoff(&rng)
        case 75..<87:  // 1001: server going away, back off
            closeHandshake(&rng, from: .server, code: 1001, reason: "Server shutting down")
            failures += 1
            reconnectDelay = backoff(&rng)
        default:  // network failure: a reset, no close frame
            pending.append(.end(EndRecord(conn: 0, t: clock, side: .server, kind: .rst, detail: "connection reset by peer")))
            _ = advance(&rng, 100...2_000)
            pending.append(.end(EndRecord(conn: 0, t: clock, side: .client, kind: .error, detail: "ECONNRESET")))
            failures += 1
            reconnectDelay = backoff(&rng)
        }
        clock += reconnectDelay
        phase = .disconnected
    }

    /// Jittered exponential backoff: 1 s doubling per failure, capped at 30 s, times 0.5...1.
    private mutating func backoff(_ rng: inout SeededGenerator) -> Micros {
        let base = min(Micros(1_000_000) << min(failures - 1, 5), 30_000_000)
        return base / 2 + Micros.random(in: 0...(base / 2), using: &rng)
    }

    private mutating func closeHandshake(_ rng: inout SeededGenerator, from: Side, code: UInt16, reason: String) {
        let body = [UInt8(code >> 8), UInt8(code & 0xFF)] + Array(reason.utf8)
        pending.append(.frame(FrameRecord(conn: 0, t: clock, from: from, opcode: .close, masked: from == .client, payload: body)))
        _ = advance(&rng, 300...30_000)
        pending.append(.frame(FrameRecord(conn: 0, t: clock, from: from.other, opcode: .close, masked: from.other == .client,
                                          payload: Array(body[0..<2]))))
        _ = advance(&rng, 100...5_000)
        pending.append(.end(EndRecord(conn: 0, t: clock, side: .server, kind: .fin)))
        _ = advance(&rng, 50...2_000)
        pending.append(.end(EndRecord(conn: 0, t: clock, side: .client, kind: .fin)))
    }
}

extension CaptureRecord {
    /// The same record on connection `conn`.
    func withConnection(_ conn: ConnectionID) -> CaptureRecord {
        switch self {
        case .header: self
        case .open(var r): { r.conn = conn; return .open(r) }()
        case .upgrade(var r): { r.conn = conn; return .upgrade(r) }()
        case .frame(var r): { r.conn = conn; return .frame(r) }()
        case .end(var r): { r.conn = conn; return .end(r) }()
        case .fault(var r): { r.conn = conn; return .fault(r) }()
        case .note(var r): { r.conn = conn; return .note(r) }()
        case .tunnel(var r): { r.conn = conn; return .tunnel(r) }()
        case .http(var r): { r.conn = conn; return .http(r) }()
        }
    }
}
