import Testing
import Capture
import WebSocket
@testable import Pcap

/// Seeded random damage to a capture (drops, reordering, duplicates, garbage packets):
/// decoding never crashes, and every frame it reports is one that was really sent:
/// bytes are never invented.
@Suite struct LossyCaptureTests {
    /// xorshift64*: a small seeded generator so every run damages the same way.
    struct Seeded: RandomNumberGenerator {
        var state: UInt64
        mutating func next() -> UInt64 {
            state ^= state >> 12
            state ^= state << 25
            state ^= state >> 27
            return state &* 2_685_821_657_736_338_717
        }
    }

    @Test(arguments: [1, 2, 3, 4, 5, 6, 7, 8] as [UInt64])
    func damagedCaptureYieldsOnlyRealFrames(seed: UInt64) throws {
        var random = Seeded(state: seed &* 0x9E37_79B9_7F4A_7C15 | 1)
        let b = PcapBuilder()
        let c = Conversation(b)
        c.handshake()
        c.upgrade()
        var sent = Set<String>()
        var packets: [[UInt8]] = []
        for i in 0..<300 {
            let fromClient = Bool.random(using: &random)
            let size = [5, 60, 130, 700, 3000][Int.random(in: 0..<5, using: &random)]
            let text = "{\"n\":\(i),\"pad\":\"" + String(repeating: "z", count: size) + "\"}"
            sent.insert(text)
            let frame = Conversation.frame(fromClient: fromClient, .text, Array(text.utf8))
            // Cut each frame into one to three segments.
            var offset = 0
            while offset < frame.count {
                let end = min(frame.count, offset + Int.random(in: 1...1500, using: &random))
                packets.append(c.packet(fromClient: fromClient, Array(frame[offset..<end])))
                offset = end
            }
        }
        // Damage: drop 3%, duplicate 3%, swap neighbours 5%, add garbage 1%.
        var damaged: [[UInt8]] = []
        for packet in packets {
            let roll = Int.random(in: 0..<100, using: &random)
            if roll < 3 { continue }
            damaged.append(packet)
            if roll < 6 { damaged.append(packet) }
            if roll >= 6, roll < 11, damaged.count >= 2 { damaged.swapAt(damaged.count - 1, damaged.count - 2) }
            if roll == 99 { damaged.append((0..<40).map { _ in UInt8.random(in: 0...255, using: &random) }) }
        }
        for packet in damaged { b.add(packet) }
        var source = try PcapRecordSource(path: try b.write(), tool: "test")
        var frames = 0
        while let record = try source.next() {
            guard case .frame(let f) = record else { continue }
            frames += 1
            let text = try #require(f.text, "a frame that is not the UTF-8 sent")
            #expect(sent.contains(text), "invented frame: \(text.prefix(60))")
        }
        #expect(frames > 150)
    }
}
