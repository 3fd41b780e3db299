import Capture
import Foundation
import Testing
import TestSupport
import WebSocket
@testable import Pcap

/// A pcap decoded on several threads (`jobs` above 1, flows sharded by hash) gives the
/// serial read's records byte for byte, in its order, with its connection ids, warnings,
/// inventory and final error; where a global bound decides (flow cap, dataless share and
/// expiry, connection cap) the read goes on serially and still matches.
@Suite struct ShardedDecodingTests {
    struct Read {
        var lines: [String]
        var error: String?
        var warnings: [String]
        var inventory: TrafficInventory
        var decoding: PcapRecordSource.Decoding
    }

    static func read(_ path: String, jobs: Int, limits: PcapRecordSource.Limits = .init(),
                     filter: String? = nil) throws -> Read {
        var source = try PcapRecordSource(path: path, filter: filter, tool: "test", limits: limits, jobs: jobs)
        var lines: [String] = []
        var error: String?
        do {
            while let record = try source.next() { lines.append(String(decoding: RecordCoding.encode(record), as: UTF8.self)) }
        } catch let failure as PcapError {
            error = failure.message
        }
        return Read(lines: lines, error: error, warnings: source.warnings, inventory: source.inventory, decoding: source.decoding)
    }

    /// Reads `path` serially and with 2, 3 and 4 jobs; every sharded read must equal the
    /// serial one. Returns the serial read and how the sharded ones went.
    @discardableResult
    static func expectSame(_ path: String, limits: PcapRecordSource.Limits = .init(), filter: String? = nil,
                           sourceLocation: SourceLocation = #_sourceLocation) throws -> (serial: Read, sharded: [PcapRecordSource.Decoding]) {
        let serial = try read(path, jobs: 1, limits: limits, filter: filter)
        #expect(serial.decoding == .serial, sourceLocation: sourceLocation)
        var decodings: [PcapRecordSource.Decoding] = []
        for jobs in 2...4 {
            let sharded = try read(path, jobs: jobs, limits: limits, filter: filter)
            #expect(sharded.lines.count == serial.lines.count, "jobs \(jobs)", sourceLocation: sourceLocation)
            if let i = zip(sharded.lines, serial.lines).enumerated().first(where: { $0.element.0 != $0.element.1 })?.offset {
                Issue.record("jobs \(jobs): record \(i) differs:\n\(sharded.lines[i])\n\(serial.lines[i])", sourceLocation: sourceLocation)
            }
            #expect(sharded.error == serial.error, "jobs \(jobs)", sourceLocation: sourceLocation)
            #expect(sharded.warnings == serial.warnings, "jobs \(jobs)", sourceLocation: sourceLocation)
            #expect(sharded.inventory == serial.inventory, "jobs \(jobs)", sourceLocation: sourceLocation)
            decodings.append(sharded.decoding)
        }
        return (serial, decodings)
    }

    /// `count` sessions one after another from port 40000, each upgraded and sending one
    /// event, closed by FIN both ways when `closed`.
    static func sessions(_ b: PcapBuilder, count: Int, closed: Bool = false) {
        for i in 0..<count {
            let c = Conversation(b, clientPort: UInt16(40000 + i))
            c.handshake()
            c.upgrade()
            c.text(fromClient: false, #"{"event":"hello"}"#)
            guard closed else { continue }
            c.send(fromClient: true, [], flags: [.ack, .fin])
            c.send(fromClient: false, [], flags: [.ack, .fin])
        }
    }

    static func opens(_ read: Read) -> Int { read.lines.filter { $0.contains(#""type":"open""#) }.count }

    @Test(arguments: ["websocket-concurrent.pcap", "websocket-deflate.pcap", "websocket-plain.pcap"])
    func theSampleCapturesMatch(name: String) throws {
        let (serial, decodings) = try Self.expectSame(TestEnvironment.path("Captures/pcap/\(name)"))
        #expect(!serial.lines.isEmpty)
        #expect(decodings.allSatisfy { $0 == .sharded })
    }

    /// Sixty interleaved sessions: some closed, some reset, some left open for the end's
    /// flush (whose order is the ids'), some seen only from mid-stream, one compressed, a
    /// non-WebSocket flow and a reused port, so every kind of record crosses shards.
    @Test func interleavedSessionsMatch() throws {
        let b = PcapBuilder()
        let sessions = (0..<60).map { Conversation(b, clientPort: UInt16(41000 + $0)) }
        for (i, c) in sessions.enumerated() where i % 7 != 3 {
            c.handshake()
            c.upgrade(extensions: i == 5 ? "permessage-deflate" : nil)
        }
        for round in 0..<4 {
            for (i, c) in sessions.enumerated() {
                c.text(fromClient: i % 2 == 0, "{\"event\":\"e\(round)\",\"data\":\"\(i)\"}")
                if i % 5 == 0 { c.text(fromClient: i % 2 == 1, "{\"event\":\"pusher:ping\"}") }
            }
        }
        for (i, c) in sessions.enumerated() {
            switch i % 4 {
            case 0:
                c.send(fromClient: true, Conversation.frame(fromClient: true, .close, [0x03, 0xE8]))
                c.send(fromClient: false, Conversation.frame(fromClient: false, .close, [0x03, 0xE8]))
                c.send(fromClient: true, [], flags: [.ack, .fin])
                c.send(fromClient: false, [], flags: [.ack, .fin])
            case 1:
                c.send(fromClient: false, [], flags: [.rst])
            default:
                break   // left open: flushed at the end
            }
        }
        let plain = Conversation(b, clientPort: 42000, serverPort: 5432)
        plain.handshake()
        plain.send(fromClient: true, Array("not websocket".utf8))
        let reused = Conversation(b, clientPort: 41000, clientISN: 90000)
        reused.handshake()
        reused.upgrade()
        reused.text(fromClient: false, #"{"event":"again"}"#)
        let (serial, decodings) = try Self.expectSame(try b.write())
        #expect(Self.opens(serial) > 50)
        #expect(decodings.allSatisfy { $0 == .sharded })
    }

    /// More than one round of packets, so the rounds' merge is crossed many times.
    @Test func manyRoundsMatch() throws {
        let b = PcapBuilder()
        let sessions = (0..<40).map { Conversation(b, clientPort: UInt16(43000 + $0)) }
        for c in sessions { c.handshake(); c.upgrade() }
        for n in 0..<(3 * ShardedPcapDecoder.roundPackets / sessions.count) {
            for (i, c) in sessions.enumerated() { c.text(fromClient: (n + i) % 2 == 0, "{\"event\":\"n\(n)\"}") }
        }
        let (serial, decodings) = try Self.expectSame(try b.write())
        #expect(serial.lines.count > 3 * ShardedPcapDecoder.roundPackets)
        #expect(decodings.allSatisfy { $0 == .sharded })
    }

    /// A SYN flood takes the dataless share of a small table: the serial read evicts the
    /// oldest, which no shard can decide, so the read goes on serially.
    @Test func theDatalessShareGoesSerialAndMatches() throws {
        let b = PcapBuilder()
        for i in 0..<101 { Conversation(b, clientPort: UInt16(20000 + i)).send(fromClient: true, [], flags: [.syn]) }
        let c = Conversation(b, clientPort: 50000)
        c.handshake()
        c.upgrade()
        c.text(fromClient: false, #"{"event":"hello"}"#)
        var limits = PcapRecordSource.Limits()
        limits.maxFlows = 100
        let (serial, decodings) = try Self.expectSame(try b.write(), limits: limits)
        #expect(Self.opens(serial) == 1)
        #expect(decodings.allSatisfy { $0 == .shardedThenSerial })
    }

    /// Dataless flows expire when a later flow comes a minute after them.
    @Test func expiryGoesSerialAndMatches() throws {
        let b = PcapBuilder()
        for i in 0..<10 { Conversation(b, clientPort: UInt16(20000 + i)).send(fromClient: true, [], flags: [.syn]) }
        b.time += 120_000_000
        let c = Conversation(b, clientPort: 50000)
        c.handshake()
        c.upgrade()
        for n in 0..<40 { c.text(fromClient: false, "{\"event\":\"e\(n)\"}") }
        let (_, decodings) = try Self.expectSame(try b.write())
        #expect(decodings.allSatisfy { $0 == .shardedThenSerial })
    }

    /// The flow cap and the connection cap dropping data: the same records, the same
    /// warnings and the same error (exit status 2 for `analyze`) as the serial read.
    @Test func capsThatDropDataMatch() throws {
        let b = PcapBuilder()
        Self.sessions(b, count: 6)
        let path = try b.write()
        var flows = PcapRecordSource.Limits()
        flows.maxFlows = 4
        let byFlows = try Self.expectSame(path, limits: flows)
        #expect(byFlows.serial.error?.contains("more than 4 TCP flows") == true)
        #expect(byFlows.sharded.allSatisfy { $0 == .shardedThenSerial })
        var connections = PcapRecordSource.Limits()
        connections.maxConnections = 3
        let byConnections = try Self.expectSame(path, limits: connections)
        #expect(byConnections.serial.error?.contains("more than 3 WebSocket connections open at once") == true)
        #expect(byConnections.sharded.allSatisfy { $0 == .shardedThenSerial })
    }

    /// Connections that close make room under the connection cap: no divergence while the
    /// connections open at once stay under it.
    @Test func aCapNotReachedStaysSharded() throws {
        let b = PcapBuilder()
        Self.sessions(b, count: 12, closed: true)
        var limits = PcapRecordSource.Limits()
        limits.maxConnections = 2
        let (serial, decodings) = try Self.expectSame(try b.write(), limits: limits)
        #expect(Self.opens(serial) == 12)
        #expect(serial.error == nil)
        #expect(decodings.allSatisfy { $0 == .sharded })
    }

    /// A file cut inside a packet (a capture still being written) and one with garbage in
    /// the middle: the same records, torn-tail warning and error as the serial read.
    @Test func tornAndCorruptFilesMatch() throws {
        let b = PcapBuilder()
        for i in 0..<8 {
            let c = Conversation(b, clientPort: UInt16(40000 + i))
            c.handshake()
            c.upgrade()
            for n in 0..<5 { c.text(fromClient: n % 2 == 0, "{\"event\":\"e\(n)\"}") }
        }
        let path = try b.write()
        let bytes = try Data(contentsOf: URL(fileURLWithPath: path))
        let torn = path + ".torn.pcap"
        try bytes.prefix(bytes.count - 7).write(to: URL(fileURLWithPath: torn))
        let cut = try Self.expectSame(torn)
        #expect(!cut.serial.warnings.isEmpty)
        // A record header in the middle claiming a huge packet: corruption, not a torn tail.
        var corrupt = bytes
        let middle = 24 + (bytes.count - 24) / 2
        corrupt.replaceSubrange(middle ..< middle + 16, with: [UInt8](repeating: 0xFF, count: 16))
        let bad = path + ".corrupt.pcap"
        try corrupt.write(to: URL(fileURLWithPath: bad))
        try Self.expectSame(bad)
    }

    /// A BPF filter applies before the shards, as before the serial decoder.
    @Test func aFilterMatches() throws {
        let path = TestEnvironment.path("Captures/pcap/websocket-concurrent.pcap")
        let all = try Self.read(path, jobs: 1)
        let (serial, _) = try Self.expectSame(path, filter: "tcp port 54134")
        #expect(serial.inventory.packets > 0)
        #expect(serial.inventory.packets < all.inventory.packets)
    }
}
