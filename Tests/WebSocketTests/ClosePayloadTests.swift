import Testing
import WebSocket

@Suite("Close payloads")
struct ClosePayloadTests {
    @Test("empty body, code only, code and reason")
    func valid() throws {
        #expect(try ClosePayload.parse([]) == ClosePayload(code: nil, reason: ""))
        #expect(try ClosePayload.parse([0x03, 0xE8]) == ClosePayload(code: 1000, reason: ""))
        let payload = ClosePayload(code: 4009, reason: "bye ✓")
        #expect(payload.encoded == [0x0F, 0xA9] + Array("bye ✓".utf8))
        #expect(try ClosePayload.parse(payload.encoded) == payload)
        #expect(ClosePayload(code: nil, reason: "ignored").encoded == [])
    }

    @Test("sendable codes parse", arguments: [1000, 1001, 1002, 1003, 1007, 1008, 1009, 1010, 1011, 1012, 1013, 1014, 3000, 4009, 4999] as [UInt16])
    func sendable(code: UInt16) throws {
        #expect(try ClosePayload.parse([UInt8(code >> 8), UInt8(code & 0xFF)]).code == code)
    }

    @Test("codes that may not be sent are invalidCloseCode (1002)",
          arguments: [0, 999, 1004, 1005, 1006, 1015, 1016, 2999, 5000, 65535] as [UInt16])
    func unsendable(code: UInt16) {
        do {
            _ = try ClosePayload.parse([UInt8(code >> 8), UInt8(code & 0xFF)])
            Issue.record("code \(code) accepted")
        } catch {
            #expect(error.kind == .invalidCloseCode)
            #expect(error.closeCode == .protocolError)
            #expect(error.message.contains("\(code)"))
        }
    }

    @Test("a 1-byte body is invalidClosePayload (1002)")
    func oneByte() {
        do {
            _ = try ClosePayload.parse([0x03])
            Issue.record("accepted")
        } catch {
            #expect(error.kind == .invalidClosePayload)
            #expect(error.closeCode == .protocolError)
        }
    }

    @Test("a reason that is not UTF-8 is invalidUTF8 (1007)")
    func badReason() {
        do {
            _ = try ClosePayload.parse([0x03, 0xE8, 0xCE, 0xBA, 0xE1, 0xBD])
            Issue.record("accepted")
        } catch {
            #expect(error.kind == .invalidUTF8)
            #expect(error.closeCode == .invalidPayload)
        }
        #expect(ClosePayload.lenient([0x03, 0xE8, 0xFF]).code == 1000)
    }
}
