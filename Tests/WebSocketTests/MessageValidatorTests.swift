import Testing
import WebSocket

@Suite("Message rules")
struct MessageValidatorTests {
    private func verdicts(_ frames: [Frame], rsv1Allowed: Bool = false, expectMasked: Bool? = nil) -> [WebSocketError.Kind?] {
        var validator = MessageValidator(rsv1Allowed: rsv1Allowed, expectMasked: expectMasked)
        return frames.map { validator.validate($0)?.kind }
    }

    @Test("a well-formed conversation passes")
    func valid() {
        let frames: [Frame] = [
            .text("hello"),
            Frame(fin: false, opcode: .binary, payload: [1, 2]),
            Frame(opcode: .ping, payload: Array("interleaved".utf8)),
            Frame(fin: false, opcode: .continuation, payload: [3]),
            Frame(opcode: .continuation, payload: []),
            Frame(opcode: .pong),
            Frame.close(code: 4009, reason: "bye"),
            Frame(opcode: .close),
        ]
        #expect(verdicts(frames) == Array(repeating: nil, count: frames.count))
    }

    @Test("UTF-8 split across fragments, inside a character, passes")
    func utf8AcrossFragments() {
        let bytes = Array("héllo 😀 wörld".utf8)
        // Cut inside the 4-byte emoji and inside "é".
        let cuts = [2, 9, 10, bytes.count]
        var frames: [Frame] = []
        var start = 0
        for (i, cut) in cuts.enumerated() {
            frames.append(Frame(fin: i == cuts.count - 1, opcode: i == 0 ? .text : .continuation,
                                payload: Array(bytes[start..<cut])))
            start = cut
        }
        #expect(verdicts(frames) == [nil, nil, nil, nil])
    }

    @Test("a message ending mid-character is invalidUTF8 (1007) at its last fragment")
    func utf8Unfinished() {
        var validator = MessageValidator()
        let first = validator.validate(Frame(fin: false, opcode: .text, payload: [0x61, 0xF0, 0x9F]))
        #expect(first == nil)
        let error = validator.validate(Frame(opcode: .continuation, payload: [0x98]))
        #expect(error?.kind == .invalidUTF8)
        #expect(error?.closeCode == .invalidPayload)
        // The next message starts clean.
        let next = validator.validate(.text("ok"))
        #expect(next == nil)
    }

    @Test("invalid UTF-8 fails at the fragment where it becomes impossible")
    func utf8FailFast() {
        #expect(verdicts([Frame(fin: false, opcode: .text, payload: [0x61, 0xC0]),
                          Frame(opcode: .continuation, payload: [0x61])])
                == [.invalidUTF8, .unexpectedContinuation])
    }

    @Test("binary messages are not UTF-8 checked")
    func binaryUnchecked() {
        #expect(verdicts([Frame(opcode: .binary, payload: [0xFF, 0xC0])]) == [nil])
    }

    /// One case per WebSocketError kind the validator produces, with the close code.
    static let cases: [(String, [Frame], WebSocketError.Kind, UInt16, Bool, Bool?)] = [
        ("reserved opcode", [Frame(opcode: Opcode(rawValue: 0x3))], .reservedOpcode, 1002, false, nil),
        ("reserved control opcode", [Frame(opcode: Opcode(rawValue: 0xB))], .reservedOpcode, 1002, false, nil),
        ("RSV1 without extension", [Frame(rsv1: true, opcode: .text)], .reservedBitsSet, 1002, false, nil),
        ("RSV2", [Frame(rsv2: true, opcode: .binary)], .reservedBitsSet, 1002, true, nil),
        ("RSV3", [Frame(rsv3: true, opcode: .binary)], .reservedBitsSet, 1002, true, nil),
        ("RSV1 on a control frame with deflate", [Frame(rsv1: true, opcode: .ping)], .reservedBitsSet, 1002, true, nil),
        ("RSV1 on a continuation with deflate",
         [Frame(fin: false, rsv1: true, opcode: .text), Frame(rsv1: true, opcode: .continuation)], .reservedBitsSet, 1002, true, nil),
        ("fragmented ping", [Frame(fin: false, opcode: .ping)], .fragmentedControlFrame, 1002, false, nil),
        ("126-byte close", [Frame(opcode: .close, payload: [0x03, 0xE8] + [UInt8](repeating: 0x61, count: 124))],
         .controlFrameTooLong, 1002, false, nil),
        ("continuation first", [Frame(opcode: .continuation)], .unexpectedContinuation, 1002, false, nil),
        ("text inside a fragmented message", [Frame(fin: false, opcode: .binary), .text("x")], .expectedContinuation, 1002, false, nil),
        ("1-byte close", [Frame(opcode: .close, payload: [0x03])], .invalidClosePayload, 1002, false, nil),
        ("close code 1005", [Frame.close(code: 1005)], .invalidCloseCode, 1002, false, nil),
        ("close reason not UTF-8", [Frame(opcode: .close, payload: [0x03, 0xE8, 0xFF])], .invalidUTF8, 1007, false, nil),
        ("text not UTF-8", [Frame(opcode: .text, payload: [0xED, 0xA0, 0x80])], .invalidUTF8, 1007, false, nil),
        ("unmasked from a client", [.text("x")], .maskRequired, 1002, false, true),
        ("masked from a server", [.text("x", maskingKey: MaskingKey(1, 2, 3, 4))], .maskNotAllowed, 1002, false, false),
    ]

    @Test("each rule yields its kind, close code and a message", arguments: cases.indices)
    func eachError(index: Int) throws {
        let (name, frames, kind, code, rsv1Allowed, expectMasked) = Self.cases[index]
        var validator = MessageValidator(rsv1Allowed: rsv1Allowed, expectMasked: expectMasked)
        for frame in frames.dropLast() {
            let setup = validator.validate(frame)
            #expect(setup == nil, "\(name): setup frame")
        }
        let verdict = validator.validate(frames.last!)
        let error = try #require(verdict, "\(name)")
        #expect(error.kind == kind, "\(name)")
        #expect(error.closeCode.rawValue == code, "\(name)")
        #expect(!error.message.isEmpty)
        #expect(error.description.contains("close \(code)"))
    }

    @Test("messages name what was wrong")
    func messages() {
        var validator = MessageValidator()
        let tooLong = validator.validate(Frame(opcode: .ping, payload: [UInt8](repeating: 0, count: 126)))
        #expect(tooLong?.message == "ping frame of 126 bytes (limit 125)")
        let reserved = validator.validate(Frame(opcode: Opcode(rawValue: 0xC)))
        #expect(reserved?.message.contains("0xc") == true)
    }

    @Test("with deflate, a compressed text message is not UTF-8 checked and RSV1 on its first frame passes")
    func compressedText() {
        #expect(verdicts([Frame(fin: false, rsv1: true, opcode: .text, payload: [0xF2, 0x48]),
                          Frame(opcode: .continuation, payload: [0xCD, 0xC9, 0xC9, 0x07, 0x00]),
                          Frame(opcode: .text, payload: [0xFF])], rsv1Allowed: true)
                == [nil, nil, .invalidUTF8])
    }

    @Test("masking direction passes when right")
    func maskingDirection() {
        #expect(verdicts([.text("x", maskingKey: MaskingKey(1, 2, 3, 4))], expectMasked: true) == [nil])
        #expect(verdicts([.text("x")], expectMasked: false) == [nil])
    }
}
