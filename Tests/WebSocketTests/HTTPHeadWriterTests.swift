import Testing
@testable import WebSocket

/// The one HTTP head writer never emits a control character, whatever its caller gives it:
/// a recorded target, reason or header value holding CR LF cannot split the head.
@Suite struct HTTPHeadWriterTests {
    /// The head's lines, split at CR LF only.
    func lines(_ bytes: [UInt8]) -> [String] {
        var lines: [String] = [], current: [UInt8] = []
        var i = 0
        while i < bytes.count {
            if bytes[i] == 13, i + 1 < bytes.count, bytes[i + 1] == 10 {
                lines.append(String(decoding: current, as: UTF8.self)); current = []; i += 2
            } else {
                current.append(bytes[i]); i += 1
            }
        }
        return lines
    }

    /// Whether any byte is a C0 control other than in the CR LF line ends, or DEL.
    func holdsControls(_ bytes: [UInt8]) -> Bool {
        lines(bytes).contains { line in line.utf8.contains { ($0 < 32 && $0 != 9) || $0 == 127 } }
    }

    @Test func aTargetWithCRLFCannotSmuggleASecondRequest() {
        let request = HTTPRequestHead(method: "GET", target: "/a HTTP/1.1\r\nHost: x\r\n\r\nGET /admin", headers: [HeaderField("Host", "h")])
        let bytes = request.serialized
        #expect(!holdsControls(bytes))
        #expect(lines(bytes) == ["GET /a%20HTTP/1.1%0D%0AHost:%20x%0D%0A%0D%0AGET%20/admin HTTP/1.1", "Host: h", ""])
    }

    @Test func aReasonOrHeaderValueWithCRLFCannotInjectAHeader() {
        let response = HTTPResponseHead(status: 101, reason: "OK\r\nSet-Cookie: a=b",
                                        headers: [HeaderField("X-A", "1\r\nSet-Cookie: c=d"), HeaderField("X-B\n", "tab\tkept\u{7f}\u{0}")])
        let bytes = response.serialized
        #expect(!holdsControls(bytes))
        #expect(lines(bytes) == ["HTTP/1.1 101 OK  Set-Cookie: a=b", "X-A: 1  Set-Cookie: c=d", "X-B : tab\tkept  ", ""])
    }

    @Test func theFirstForbiddenByteIsNamed() {
        #expect(HTTPHeadText.firstControl(in: "abc", allowingTab: true) == nil)
        #expect(HTTPHeadText.firstControl(in: "a\tb", allowingTab: true) == nil)
        #expect(HTTPHeadText.firstControl(in: "a\tb", allowingTab: false)?.offset == 1)
        let found = HTTPHeadText.firstControl(in: "é\r\n", allowingTab: true)
        #expect(found?.offset == 2 && found?.byte == 13)
    }
}
