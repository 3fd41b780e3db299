import Capture
import Faults
import WebSocket
@testable import ProxyCore

import Testing

/// Large frames are relayed as they arrive, never gathered whole (issue 15, item 9).
@Suite struct RelayPassThroughTests {
    static func sha256(_ bytes: [UInt8]) -> String {
        let digest = SHA256Digest()
        digest.update(bytes)
        return digest.finish()
    }

    @Test func aLargeClientFrameIsStreamedReMaskedAndRecordedAsPrefixLengthAndDigest() throws {
        var h = Harness()
        h.open()
        let payload = (0..<(3 << 20)).map { UInt8(truncatingIfNeeded: $0 &* 7) }
        let wire = Wire.fromClient(Frame(opcode: .binary, payload: payload))
        var upstream: [UInt8] = []
        var records: [FrameRecord] = []
        var chunkStart = 0
        while chunkStart < wire.count {
            let chunk = Array(wire[chunkStart ..< min(wire.count, chunkStart + 65_536)])
            chunkStart += chunk.count
            let commands = h.client(chunk)
            upstream += commands.sent(to: .server)
            records += commands.frameRecords
            // Never more than a read's worth held: the payload is not gathered.
            #expect(h.session.client.recorder.decoder.bufferedByteCount <= 65_536)
            if chunkStart < wire.count { #expect(upstream.count > chunkStart - 70_000, "bytes are passed on as they arrive") }
        }
        let frames = try Wire.frames(upstream)
        try #require(frames.count == 1)
        #expect(frames[0].payload == payload)
        #expect(frames[0].isMasked)
        #expect(records.count == 1)
        let record = try #require(records.first)
        #expect(record.length == payload.count)
        #expect(record.payload == Array(payload.prefix(4_096)))
        #expect(record.sha256 == Self.sha256(payload))
        #expect(record.action == .forwarded)
    }

    @Test func smallFramesAndFaultedConnectionsAreStillRelayedWhole() throws {
        var h = Harness(faults: FaultEngine(rules: [try FaultRule.parse("latency:1ms,dir=s2c")]))
        h.open()
        let payload = [UInt8](repeating: 1, count: 1 << 20)
        let wire = Wire.fromServer(Frame(opcode: .binary, payload: payload))
        h.server(Array(wire.prefix(100_000)))
        #expect(!h.session.server.recorder.decoder.isPassingThrough, "a fault may need the whole frame")
        var plain = Harness()
        plain.open()
        plain.server(Array(wire.prefix(100_000)))
        #expect(plain.session.server.recorder.decoder.isPassingThrough)
        let rest = plain.server(Array(wire.dropFirst(100_000)))
        #expect(rest.frameRecords.first?.sha256 == Self.sha256(payload))
        let next = plain.server(Wire.fromServer(.text("after")))
        #expect(next.sent(to: .client) == Wire.fromServer(.text("after")))
        #expect(next.frameRecords.first?.sha256 == nil)
    }

    /// Issue 15 item 9 with fault rules: a large frame is gathered only when an armed fault
    /// needs it whole, within a budget shared by all connections; past the budget it streams
    /// through with a note.
    static func largeFrame(_ size: Int) -> [UInt8] {
        Wire.fromServer(Frame(opcode: .binary, payload: [UInt8](repeating: 3, count: size)))
    }

    @Test func aFaultThatActsOnNoDataFrameLetsLargeFramesStream() throws {
        var h = Harness(faults: FaultEngine(rules: [try FaultRule.parse("stall-pongs")]))
        h.open()
        let wire = Self.largeFrame(1 << 20)
        h.server(Array(wire.prefix(100_000)))
        #expect(h.session.server.recorder.decoder.isPassingThrough, "stall-pongs needs no binary frame whole")
        #expect(h.session.config.largeFrameBudget.inUse == 0)
    }

    @Test func aFaultThatNeedsTheFrameGathersItWithinTheSharedBudget() throws {
        var config = RelayConfig(upstreamHost: "upstream.test:9000")
        config.largeFrameBudget = LargeFrameBudget(bytes: 1 << 20)
        let engine = FaultEngine(rules: [try FaultRule.parse("drop-message,event=never-sent,dir=s2c")])
        var first = Harness(config: config, faults: engine)
        var second = Harness(config: config, faults: engine)
        first.open()
        second.open()
        let size = 600_000
        let wire = Self.largeFrame(size)
        first.server(Array(wire.prefix(100_000)))
        #expect(!first.session.server.recorder.decoder.isPassingThrough, "gathered for the fault")
        #expect(config.largeFrameBudget.inUse == size)
        // The second connection's frame does not fit what is left: it streams through, noted.
        let streamed = second.server(Array(wire.prefix(100_000)))
        #expect(second.session.server.recorder.decoder.isPassingThrough)
        #expect(streamed.notes.contains { $0.message.contains("could not be applied") && $0.message.contains("\(size)-byte") })
        #expect(streamed.sent(to: .client).count > 90_000, "relayed as it comes")
        let secondRest = second.server(Array(wire.dropFirst(100_000)))
        #expect(secondRest.frameRecords.first?.length == size)
        // The first completes: relayed whole, and its share of the budget is back.
        let rest = first.server(Array(wire.dropFirst(100_000)))
        #expect(try Wire.frames(rest.sent(to: .client)).first?.payload.count == size)
        #expect(config.largeFrameBudget.inUse == 0)
    }

    @Test func aSessionDroppedWhileGatheringGivesItsBudgetBack() throws {
        var config = RelayConfig(upstreamHost: "upstream.test:9000")
        config.largeFrameBudget = LargeFrameBudget(bytes: 1 << 20)
        do {
            var h = Harness(config: config, faults: FaultEngine(rules: [try FaultRule.parse("latency:10ms")]))
            h.open()
            h.server(Array(Self.largeFrame(700_000).prefix(50_000)))
            #expect(config.largeFrameBudget.inUse == 700_000)
        }
        #expect(config.largeFrameBudget.inUse == 0)
    }
}
