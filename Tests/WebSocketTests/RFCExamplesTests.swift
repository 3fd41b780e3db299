import Testing
import WebSocket

/// RFC 6455 section 5.7, byte for byte, in both directions.
@Suite("RFC 6455 5.7 examples")
struct RFCExamplesTests {
    static let key = MaskingKey(0x37, 0xFA, 0x21, 0x3D)

    static let examples: [(String, String, Frame)] = [
        ("single-frame unmasked text", "81 05 48 65 6c 6c 6f", .text("Hello")),
        ("single-frame masked text", "81 85 37 fa 21 3d 7f 9f 4d 51 58", .text("Hello", maskingKey: key)),
        ("fragmented unmasked text, first", "01 03 48 65 6c", .text("Hel", fin: false)),
        ("fragmented unmasked text, second", "80 02 6c 6f", Frame(opcode: .continuation, payload: Array("lo".utf8))),
        ("unmasked ping", "89 05 48 65 6c 6c 6f", Frame(opcode: .ping, payload: Array("Hello".utf8))),
        ("masked pong", "8a 85 37 fa 21 3d 7f 9f 4d 51 58", Frame(opcode: .pong, maskingKey: key, payload: Array("Hello".utf8))),
    ]

    @Test("examples encode and decode byte for byte", arguments: examples.indices)
    func example(index: Int) throws {
        let (name, wireHex, frame) = Self.examples[index]
        let wire = hex(wireHex)
        #expect(FrameEncoder.encode(frame) == wire, "\(name)")
        for feeding in Feeding.allCases {
            #expect(try decodeAll(wire, feeding: feeding) == [frame], "\(name) \(feeding)")
        }
    }

    @Test("256 bytes binary in one unmasked frame: 16-bit length header")
    func binary256() throws {
        let payload = patternBytes(256)
        let wire = FrameEncoder.encode(Frame(opcode: .binary, payload: payload))
        #expect(Array(wire.prefix(4)) == hex("82 7E 01 00"))
        #expect(Array(wire.dropFirst(4)) == payload)
    }

    @Test("64 KiB binary in one unmasked frame: 64-bit length header")
    func binary64K() throws {
        let payload = patternBytes(65536)
        let wire = FrameEncoder.encode(Frame(opcode: .binary, payload: payload))
        #expect(Array(wire.prefix(10)) == hex("82 7F 00 00 00 00 00 01 00 00"))
        #expect(try decodeAll(wire) == [Frame(opcode: .binary, payload: payload)])
    }
}
