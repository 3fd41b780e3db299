import Capture
import Foundation
import Testing
import TestSupport

/// permessage-deflate through a proxy that drops a message (RFC 7692 7.1.1). With context
/// takeover a compressed message may refer back to the message before it, so a client that
/// never got the dropped one cannot inflate the next and fails the connection. The proxy
/// therefore asks the upstream for `server_no_context_takeover` and binds the client with
/// `client_no_context_takeover` in the 101. Real peers: Python `websockets` on both ends,
/// compression on (its default offer; the echo server accepts permessage-deflate).
@Suite("permessage-deflate with dropped messages", .serialized)
struct DeflateDropTests {
    static let client = TestEnvironment.path("Tests/Peers/deflate_drop_client.py")

    @Test("a server message dropped under drop-message: the next compressed message still inflates on the client")
    func droppedServerMessage() throws {
        let server = try ReadyServer("ws_echo_server.py")
        let directory = TestEnvironment.temporaryDirectory("faultline-deflate-drop")
        let capturePath = directory.appendingPathComponent("capture.jsonl").path
        // --spec bird: the relay decodes the JSON envelopes, so event= picks the message.
        let proxy = try ChildProcess.faultline(["proxy", "--listen", "127.0.0.1:0",
                                                "--upstream", "ws://127.0.0.1:\(server.port)", "--record", capturePath,
                                                "--spec", "bird", "--fault", "drop-message,event=drop-me,dir=s2c"])
        defer { proxy.stop() }
        let port = try listeningPort(of: proxy, "the proxy")
        let run = try runCommand(TestEnvironment.python, ["-u", Self.client, "ws://127.0.0.1:\(port)/app/key",
                                                         "keep-1", "drop-me", "keep-2", "keep-3"], timeout: 60)
        let lines = run.stdout.split(separator: "\n").map(String.init)
        // websockets' client (extensions/permessage_deflate.py, process_response_params)
        // takes client_no_context_takeover from a response that names it, offered or not.
        let extensions = try #require(lines.first { $0.hasPrefix("EXTENSIONS ") }, "\(lines) \(run.stderr)")
        #expect(extensions.contains("permessage-deflate"))
        #expect(extensions.contains("server_no_context_takeover"), "the server agreed to drop its context")
        #expect(extensions.contains("client_no_context_takeover"), "the client is bound not to keep its context")
        // The echo of drop-me never reached the client; the message after it inflated.
        #expect(lines.filter { $0.hasPrefix("RECV ") } == ["RECV keep-1", "RECV keep-2", "RECV keep-3"], "\(lines)")
        #expect(lines.last == "DONE" && run.status == 0, "\(lines) \(run.stderr)")

        let capture = try stopRecordingProxy(proxy, capture: capturePath)
        let dropped = capture.frames.filter { $0.action == .dropped }
        #expect(dropped.count == 1 && dropped.first?.from == .server && dropped.first?.compressed == true, "\(dropped)")
        let notes = capture.notes.map(\.message).filter { $0.hasPrefix("permessage-deflate: ") }
        #expect(notes.contains { $0.contains("asked the upstream for server_no_context_takeover") }, "\(notes)")
        // websockets' server (process_request_params) accepts both parameters as asked, so
        // the 101 needed no addition and nothing was declined.
        #expect(!notes.contains { $0.contains("added client_no_context_takeover") || $0.contains("declined") }, "\(notes)")
        // The client's request is recorded as it sent it; the proxy's rewrite is the note.
        let request = try #require(capture.upgrades.first { $0.from == .client })
        #expect(request.header("Sec-WebSocket-Extensions")?.contains("server_no_context_takeover") == false)
    }

    @Test("without faults the negotiation passes untouched: context takeover stays on")
    func noFaultsNoRewrite() throws {
        let server = try ReadyServer("ws_echo_server.py")
        let proxy = try ChildProcess.faultline(["proxy", "--listen", "127.0.0.1:0",
                                                "--upstream", "ws://127.0.0.1:\(server.port)"])
        defer { proxy.stop() }
        let port = try listeningPort(of: proxy, "the proxy")
        let run = try runCommand(TestEnvironment.python, ["-u", Self.client, "ws://127.0.0.1:\(port)/app/key",
                                                         "keep-1", "keep-2"], timeout: 60)
        let lines = run.stdout.split(separator: "\n").map(String.init)
        let extensions = try #require(lines.first { $0.hasPrefix("EXTENSIONS ") }, "\(lines) \(run.stderr)")
        #expect(extensions.contains("permessage-deflate") && !extensions.contains("no_context_takeover"), "\(extensions)")
        #expect(lines.last == "DONE", "\(lines)")
    }
}
