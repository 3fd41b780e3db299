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
            #expect(h.session.client.decoder.bufferedByteCount <= 65_536)
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
        #expect(!h.session.server.decoder.isPassingThrough, "a fault may need the whole frame")
        var plain = Harness()
        plain.open()
        plain.server(Array(wire.prefix(100_000)))
        #expect(plain.session.server.decoder.isPassingThrough)
        let rest = plain.server(Array(wire.dropFirst(100_000)))
        #expect(rest.frameRecords.first?.sha256 == Self.sha256(payload))
        let next = plain.server(Wire.fromServer(.text("after")))
        #expect(next.sent(to: .client) == Wire.fromServer(.text("after")))
        #expect(next.frameRecords.first?.sha256 == nil)
    }
}
