import Capture
import Testing
import TestSupport
import Vocabulary
import WebSocket
@testable import Replay

/// A recorded upgrade whose target, reason or header values hold a control character is
/// refused before anything is replayed: sent verbatim it would smuggle a second request to
/// a live server, or inject headers into the 101 a live client gets.
@Suite struct RecordedHeadTests {
    func capture(request: UpgradeRecord = Fixture.request(1), response: UpgradeRecord = Fixture.response(1)) throws -> String {
        let path = TestEnvironment.temporaryDirectory("replay-heads").appendingPathComponent("c.jsonl").path
        let writer = try CaptureWriter(path: path, header: CaptureHeader(tool: "test", startedAt: 0, source: "test"))
        try writer.append(.open(OpenRecord(conn: 1, t: 0, client: "10.0.0.7:5000", server: "127.0.0.1:80")))
        try writer.append(.upgrade(request))
        try writer.append(.upgrade(response))
        try writer.append(.frame(Fixture.text(1, 3_000, .server, Fixture.established)))
        try writer.close()
        return path
    }

    func refusal(_ path: String) -> String? {
        do {
            _ = try ReplayLoader.load({ try CaptureReader(path: path) }, selection: .firstClient)
            return nil
        } catch let error as ReplayInputError {
            return error.message
        } catch {
            return "unexpected \(error)"
        }
    }

    @Test func aTargetWithCRLFIsRefused() throws {
        var request = Fixture.request(1)
        request.target = "/app/key HTTP/1.1\r\nHost: evil\r\n\r\nGET /admin"
        let message = try #require(refusal(try capture(request: request)))
        #expect(message.contains("connection 1"))
        #expect(message.contains("upgrade request's target"))
        #expect(message.contains("CR (0x0D) at byte 17"))
    }

    @Test func aReasonOrHeaderValueWithCRLFIsRefused() throws {
        var response = Fixture.response(1)
        response.reason = "Switching Protocols\r\nSet-Cookie: session=stolen"
        let reason = try #require(refusal(try capture(response: response)))
        #expect(reason.contains("upgrade response's reason"))
        response = Fixture.response(1)
        response.headers.append(HeaderField("X-Server", "bird\nSet-Cookie: a=b"))
        let value = try #require(refusal(try capture(response: response)))
        #expect(value.contains("upgrade response's header 'X-Server'"))
        #expect(value.contains("LF (0x0A)"))
    }

    @Test func aTabInAHeaderValueIsLegalAndLoads() throws {
        var request = Fixture.request(1)
        request.headers.append(HeaderField("X-Note", "a\tb"))
        #expect(refusal(try capture(request: request)) == nil)
    }
}
