import Testing
import WebSocket

/// The errors the decoder itself throws: only what cannot be parsed or buffered.
@Suite("Decoder errors")
struct DecoderErrorTests {
    @Test("a payload over maxPayload throws 1009 from the header alone, before buffering", arguments: [126, 65536])
    func tooLarge(length: Int) throws {
        var decoder = FrameDecoder(maxPayload: 125)
        var header = FrameEncoder.encode(Frame(opcode: .binary, payload: [UInt8](repeating: 0, count: length)))
        header.removeLast(length)
        decoder.append(header)
        do {
            _ = try decoder.next()
            Issue.record("no error")
        } catch {
            #expect(error.kind == .payloadTooLarge)
            #expect(error.closeCode == .messageTooBig)
            #expect(error.message.contains("\(length)"))
            #expect(error.message.contains("125"))
        }
        // The decoder stays failed.
        decoder.append([0x81, 0x00])
        #expect(throws: WebSocketError.self) { try decoder.next() }
    }

    @Test("a payload of exactly maxPayload is fine")
    func atLimit() throws {
        let frame = Frame(opcode: .binary, payload: patternBytes(1000))
        #expect(try decodeAll(FrameEncoder.encode(frame), feeding: .byteByByte, maxPayload: 1000) == [frame])
    }

    @Test("a 64-bit length with the top bit set is lengthOverflow (1002)")
    func overflow() {
        var decoder = FrameDecoder()
        decoder.append(hex("82 7F 80 00 00 00 00 00 00 01"))
        do {
            _ = try decoder.next()
            Issue.record("no error")
        } catch {
            #expect(error.kind == .lengthOverflow)
            #expect(error.closeCode == .protocolError)
        }
    }

    @Test("non-minimal lengths pass by default and are flagged; rejected on request")
    func nonMinimal() throws {
        let wire16 = hex("82 7E 00 05 01 02 03 04 05")
        let wire64 = hex("82 7F 00 00 00 00 00 00 00 05 01 02 03 04 05")
        for wire in [wire16, wire64] {
            var lenient = FrameDecoder()
            lenient.append(wire)
            #expect(try lenient.next() == Frame(opcode: .binary, payload: [1, 2, 3, 4, 5]))
            #expect(lenient.lastFrameHadNonMinimalLength)
            lenient.append(hex("81 00"))
            _ = try lenient.next()
            #expect(!lenient.lastFrameHadNonMinimalLength)

            var strict = FrameDecoder()
            strict.rejectsNonMinimalLength = true
            strict.append(wire)
            do {
                _ = try strict.next()
                Issue.record("no error")
            } catch {
                #expect(error.kind == .nonMinimalLength)
                #expect(error.closeCode == .protocolError)
            }
        }
    }

    @Test("reserved opcodes, RSV bits and fragmented control frames come out as frames")
    func structuralOnly() throws {
        let frames = [Frame(rsv1: true, rsv2: true, rsv3: true, opcode: Opcode(rawValue: 0x7), payload: [1]),
                      Frame(fin: false, opcode: .ping, payload: [UInt8](repeating: 9, count: 200))]
        let wire = frames.flatMap { FrameEncoder.encode($0) }
        #expect(try decodeAll(wire, feeding: .byteByByte) == frames)
    }
}
