import Testing
import Vocabulary
import WebSocket

@Suite("Frame round trips")
struct FrameRoundTripTests {
    static let opcodes: [Opcode] = (0...15).map { Opcode(rawValue: UInt8($0)) }
    static let lengths = [0, 1, 125, 126, 127, 65535, 65536, 1 << 20]

    @Test("every opcode, masked and unmasked, survives encode and decode", arguments: opcodes)
    func everyOpcode(opcode: Opcode) throws {
        for masked in [false, true] {
            let frame = Frame(fin: opcode.rawValue % 2 == 0, rsv1: true, rsv3: opcode.isControl,
                              opcode: opcode, maskingKey: masked ? MaskingKey(1, 2, 3, 4) : nil,
                              payload: patternBytes(Int(opcode.rawValue) * 10))
            for feeding in Feeding.allCases {
                #expect(try decodeAll(FrameEncoder.encode(frame), feeding: feeding) == [frame], "\(feeding)")
            }
        }
    }

    @Test("lengths across all three encodings, fed whole, byte by byte and in random splits",
          arguments: lengths)
    func lengthsRoundTrip(length: Int) throws {
        let payload = patternBytes(length)
        for masked in [false, true] {
            let frame = Frame(opcode: .binary, maskingKey: masked ? MaskingKey(0xA1, 0xB2, 0xC3, 0xD4) : nil,
                              payload: payload)
            let wire = FrameEncoder.encode(frame)
            let lengthBytes = length <= 125 ? 0 : (length <= 65535 ? 2 : 8)
            #expect(wire.count == 2 + lengthBytes + (masked ? 4 : 0) + length)
            let feedings: [Feeding] = length > 70_000 ? [.whole, .randomSplits] : Feeding.allCases
            for feeding in feedings {
                let frames = try decodeAll(wire, feeding: feeding)
                #expect(frames.count == 1)
                #expect(frames.first == frame, "length \(length) masked \(masked) \(feeding)")
            }
        }
    }

    @Test("a 1 MiB masked frame byte by byte")
    func largeByteByByte() throws {
        let frame = Frame(opcode: .text, maskingKey: MaskingKey(9, 8, 7, 6), payload: patternBytes(1 << 20, seed: 3))
        #expect(try decodeAll(FrameEncoder.encode(frame), feeding: .byteByByte) == [frame])
    }

    @Test("many frames back to back in seeded random splits")
    func streamOfFrames() throws {
        var generator = SeededGenerator(seed: 99)
        var frames: [Frame] = []
        var wire: [UInt8] = []
        for i in 0..<300 {
            let length = [0, 5, 125, 126, 300, 65535, 65536][i % 7]
            let masked = Bool.random(using: &generator)
            let frame = Frame(fin: Bool.random(using: &generator),
                              opcode: [.text, .binary, .continuation, .ping, .pong, .close][i % 6],
                              maskingKey: masked ? MaskingKey.random(using: &generator) : nil,
                              payload: patternBytes(length, seed: UInt64(i)))
            frames.append(frame)
            FrameEncoder.encode(frame, into: &wire)
        }
        for seed in [1, 2, 3] as [UInt64] {
            var decoder = FrameDecoder()
            #expect(try decodeAll(wire, feeding: .randomSplits, decoder: &decoder, seed: seed) == frames)
            #expect(decoder.bufferedByteCount == 0)
        }
    }

    @Test("bufferedByteCount counts a partial frame's bytes")
    func bufferedCount() throws {
        let wire = FrameEncoder.encode(Frame(opcode: .binary, maskingKey: MaskingKey(1, 1, 1, 1), payload: patternBytes(300)))
        var decoder = FrameDecoder()
        for (index, byte) in wire.enumerated() {
            decoder.append([byte])
            let frame = try decoder.next()
            if index == wire.count - 1 {
                #expect(frame != nil)
                #expect(decoder.bufferedByteCount == 0)
            } else {
                #expect(frame == nil)
                #expect(decoder.bufferedByteCount == index + 1)
            }
        }
    }

    @Test("masking in pieces with offsets equals masking whole, and is its own inverse")
    func maskingInPieces() {
        let key = MaskingKey(0x37, 0xFA, 0x21, 0x3D)
        let original = patternBytes(1001)
        var whole = original
        applyMask(key, to: &whole)
        #expect(whole != original)
        var pieces: [UInt8] = []
        var start = 0
        for size in [1, 2, 3, 17, 400, 578] {
            var piece = Array(original[start..<(start + size)])
            applyMask(key, to: &piece, offset: start)
            pieces += piece
            start += size
        }
        #expect(pieces == whole)
        for (i, byte) in whole.enumerated() { #expect(byte == original[i] ^ key.array[i % 4]) }
        applyMask(key, to: &whole)
        #expect(whole == original)
    }
}
