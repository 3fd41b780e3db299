import Capture
import Foundation
import JSON
import Testing
import TestSupport
import WebSocket

/// `faultline replay` against real Python `websockets` peers (Tests/Peers/replay_*.py),
/// with captures written here by `CaptureWriter`.
@Suite(.serialized) struct ReplayEndToEndTests {
    static let established = #"{"event":"bird:connection_established","data":"{\"socket_id\":\"111.222\",\"activity_timeout\":120}"}"#
    static let subscribe = #"{"event":"bird:subscribe","data":{"channel":"private-orders","auth":"key:aaaa"}}"#
    static let succeeded = #"{"event":"bird_internal:subscription_succeeded","channel":"private-orders","data":"{}"}"#
    static let typing = #"{"event":"client-typing","channel":"private-orders","data":{"socket_id":"111.222"}}"#
    static let typingAck = #"{"event":"typing-ack","channel":"private-orders","data":{"socket_id":"111.222"}}"#
    static let bye = #"{"event":"client-bye","data":{}}"#

    enum Step {
        case server(Micros, String)
        case client(Micros, String)
        case close(Micros, Side, UInt16, String)
    }

    /// Writes a capture of one client's connections, each a list of steps (times relative
    /// to the connection's open), ended by the server's FIN and then the client's.
    static func writeCapture(_ connections: [[Step]], name: String) throws -> String {
        let path = TestEnvironment.temporaryDirectory("replay-e2e").appendingPathComponent(name).path
        let writer = try CaptureWriter(path: path, header: CaptureHeader(tool: "test", startedAt: 0, source: "test"))
        for (index, steps) in connections.enumerated() {
            let conn = index + 1
            let t0 = Micros(index) * 1_000_000
            try writer.append(.open(OpenRecord(conn: conn, t: t0, client: "127.0.0.1:\(40000 + conn)", server: "127.0.0.1:6001")))
            try writer.append(.upgrade(UpgradeRecord(conn: conn, t: t0 + 1_000, from: .client, method: "GET", target: "/app/key?protocol=7", headers: [
                HeaderField("Host", "127.0.0.1:6001"), HeaderField("Upgrade", "websocket"), HeaderField("Connection", "Upgrade"),
                HeaderField("Sec-WebSocket-Key", "x3JJHMbDL1EzLkh9GBhXDw=="), HeaderField("Sec-WebSocket-Version", "13"),
                HeaderField("User-Agent", "BirdRealtime/2.3")])))
            try writer.append(.upgrade(UpgradeRecord(conn: conn, t: t0 + 2_000, from: .server, status: 101, reason: "Switching Protocols", headers: [
                HeaderField("Upgrade", "websocket"), HeaderField("Connection", "Upgrade"),
                HeaderField("Sec-WebSocket-Accept", "HSmrc0sMlYUkAGmm5OPpG2HaGWk=")])))
            var last = t0 + 2_000
            for step in steps {
                switch step {
                case .server(let t, let text), .client(let t, let text):
                    let from: Side = if case .server = step { .server } else { .client }
                    last = t0 + t
                    try writer.append(.frame(FrameRecord(conn: conn, t: last, from: from, opcode: .text, masked: from == .client,
                                                         payload: Array(text.utf8))))
                case .close(let t, let from, let code, let reason):
                    last = t0 + t
                    try writer.append(.frame(FrameRecord(conn: conn, t: last, from: from, opcode: .close, masked: from == .client,
                                                         payload: Frame.close(code: code, reason: reason).payload)))
                }
            }
            try writer.append(.end(EndRecord(conn: conn, t: last + 3_000, side: .server, kind: .fin)))
            try writer.append(.end(EndRecord(conn: conn, t: last + 4_000, side: .client, kind: .fin)))
        }
        try writer.close()
        return path
    }

    /// A Bird client's reconnect story: subscribed, told to reconnect (4200), reconnects,
    /// subscribed again, terminated (4009).
    static func clientStory() throws -> String {
        func connection(closeCode: UInt16, reason: String) -> [Step] {
            [.server(5_000, established), .client(20_000, subscribe), .server(25_000, succeeded), .client(40_000, typing),
             .close(60_000, .server, closeCode, reason), .close(62_000, .client, closeCode, reason)]
        }
        return try writeCapture([connection(closeCode: 4200, reason: "reconnect now"), connection(closeCode: 4009, reason: "bye")],
                                name: "client-story.jsonl")
    }

    /// Starts `faultline replay --listen` and returns it with its address.
    func startServerReplay(_ capture: String, _ extra: [String] = []) throws -> (ChildProcess, String) {
        let replay = try ChildProcess.faultline(["replay", capture, "--listen", "127.0.0.1:0", "--patience", "2s"] + extra)
        let line = try #require(replay.waitForLine(timeout: 20) { $0.hasPrefix("listening on ") }, "replay did not listen: \(replay.errorOutput)")
        return (replay, String(line.dropFirst("listening on ".count)))
    }

    @Test func asTheServerToAPythonClientThroughAReconnect() throws {
        let capture = try Self.clientStory()
        let (replay, address) = try startServerReplay(capture)
        defer { replay.stop() }
        try expectClientStoryReplayed(by: replay, to: ["ws://\(address)/app/key?protocol=7"])
    }

    /// Runs replay_client.py (URL and options in `client`) through both connections of
    /// `clientStory()` against `replay`; both must see the recorded story, without differences.
    func expectClientStoryReplayed(by replay: ChildProcess, to client: [String]) throws {
        let client = try ChildProcess.python(TestEnvironment.path("Tests/Peers/replay_client.py"), client + ["--connections", "2"])
        defer { client.stop() }
        #expect(client.waitForExit(timeout: 30) == 0, "client: \(client.output)")
        #expect(client.output == ["GOT bird_internal:subscription_succeeded", "CLOSED 4200 reconnect now",
                                  "GOT bird_internal:subscription_succeeded", "CLOSED 4009 bye"])
        #expect(replay.waitForExit(timeout: 20) == 0, "replay: \(replay.output) \(replay.errorOutput)")
        #expect(replay.output.last == "replayed 2 connections as the server (2 recorded): no differences")
    }

    @Test func asTheServerReportsAClientThatSubscribesElsewhere() throws {
        let capture = try Self.clientStory()
        let report = TestEnvironment.temporaryDirectory("replay-e2e").appendingPathComponent("report.json").path
        let (replay, address) = try startServerReplay(capture, ["--conn", "1", "--format", "json", "--output", report])
        defer { replay.stop() }
        let client = try ChildProcess.python(TestEnvironment.path("Tests/Peers/replay_client.py"),
                                             ["ws://\(address)/app/key?protocol=7", "--channel", "private-other"])
        defer { client.stop() }
        #expect(client.waitForExit(timeout: 30) == 0, "client: \(client.output)")
        #expect(replay.waitForExit(timeout: 20) == 1, "replay: \(replay.output) \(replay.errorOutput)")
        let json = try JSONParser.parse(try String(contentsOfFile: report, encoding: .utf8))
        let deviations = try #require(json["deviations"]?.arrayValue)
        #expect(deviations.compactMap { $0["kind"]?.stringValue } == ["different", "different"])
        #expect(deviations.first?["details"]?.arrayValue?.first?.stringValue == #"data.channel: "private-other" (recorded "private-orders")"#)
        #expect(json["role"]?.stringValue == "server")
    }

    @Test func strictStopsAtTheFirstDifference() throws {
        let capture = try Self.clientStory()
        let (replay, address) = try startServerReplay(capture, ["--strict"])
        defer { replay.stop() }
        let client = try ChildProcess.python(TestEnvironment.path("Tests/Peers/replay_client.py"),
                                             ["ws://\(address)/app/key?protocol=7", "--channel", "private-other"])
        defer { client.stop() }
        #expect(replay.waitForExit(timeout: 20) == 1, "replay: \(replay.output) \(replay.errorOutput)")
        #expect(replay.output.filter { $0.hasPrefix("conn ") }.count == 1)
        #expect(replay.output.last?.hasSuffix("1 difference (1 different); stopped at the first (--strict)") == true)
        // The client saw its connection reset instead of an answer.
        #expect(client.waitForExit(timeout: 20) == 1)
    }

    /// The server side of a recording: subscribed, typing acknowledged (with the socket_id
    /// the server gave), then the client says bye and the server closes with 4009.
    static func serverConversation() throws -> String {
        try writeCapture([[
            .server(5_000, established), .client(20_000, subscribe), .server(25_000, succeeded),
            .client(40_000, typing), .server(45_000, typingAck), .client(50_000, bye),
            .close(55_000, .server, 4009, "bye"), .close(57_000, .client, 4009, "bye"),
        ]], name: "server-conversation.jsonl")
    }

    func startPythonServer() throws -> (ChildProcess, String) {
        let server = try ChildProcess.python(TestEnvironment.path("Tests/Peers/replay_server.py"))
        let ready = try #require(server.waitForLine(timeout: 20) { $0.hasPrefix("READY ") }, "server: \(server.errorOutput)")
        return (server, String(ready.dropFirst("READY ".count)))
    }

    @Test func asTheClientAgainstAPythonServerThreeCopiesAtOnce() throws {
        let capture = try Self.serverConversation()
        let (server, port) = try startPythonServer()
        defer { server.stop() }
        let result = try runFaultline(["replay", capture, "--upstream", "ws://127.0.0.1:\(port)", "--clients", "3", "--patience", "2s"], timeout: 60)
        #expect(result.status == 0, "\(result.stdout) \(result.stderr)")
        #expect(result.stdout == "replayed 3 connections as the client (1 recorded): no differences")
    }

    @Test func withoutTheSocketIDMappingTheServerNotices() throws {
        let capture = try Self.serverConversation()
        let (server, port) = try startPythonServer()
        defer { server.stop() }
        // socket_id compared as it is: the recorded one goes out, the server answers wrong-socket.
        let result = try runFaultline(["replay", capture, "--upstream", "ws://127.0.0.1:\(port)", "--speed", "max",
                                       "--ignore-field", "socket_id", "--patience", "1s"], timeout: 60)
        #expect(result.status == 1, "\(result.stdout) \(result.stderr)")
        #expect(result.stdout.contains("extra  text wrong-socket"))
        #expect(result.stdout.contains("missing  text typing-ack"))
    }

    @Test func asTheServerOverTLSToAPythonClient() throws {
        let certificates = try CertDirectory(label: "replay-tls")
        let capture = try Self.clientStory()
        let (replay, address) = try startServerReplay(capture, ["--tls-cert", certificates.certificate, "--tls-key", certificates.key])
        defer { replay.stop() }
        let port = try #require(address.split(separator: ":").last)
        try expectClientStoryReplayed(by: replay, to: ["wss://localhost:\(port)/app/key?protocol=7", "--ca", certificates.ca])
    }

    /// The Python server speaks plain ws; `faultline proxy --tls-cert` in front of it is the
    /// wss:// server the replay verifies and talks to.
    @Test func asTheClientAgainstAWSSServer() throws {
        let certificates = try CertDirectory(label: "replay-tls")
        let capture = try Self.serverConversation()
        let (server, port) = try startPythonServer()
        defer { server.stop() }
        let proxy = try ChildProcess.faultline(["proxy", "--listen", "127.0.0.1:0", "--upstream", "ws://127.0.0.1:\(port)",
                                                "--tls-cert", certificates.certificate, "--tls-key", certificates.key])
        defer { proxy.stop() }
        let proxyPort = try listeningPort(of: proxy, "the proxy")
        let verified = try runFaultline(["replay", capture, "--upstream", "wss://localhost:\(proxyPort)", "--upstream-ca", certificates.ca,
                                         "--patience", "2s"], timeout: 60)
        #expect(verified.status == 0, "\(verified.stdout) \(verified.stderr)")
        #expect(verified.stdout == "replayed 1 connection as the client (1 recorded): no differences")
        // Without the CA the certificate is not trusted: reported as a failed handshake, exit 1.
        let untrusted = try runFaultline(["replay", capture, "--upstream", "wss://localhost:\(proxyPort)", "--patience", "1s"], timeout: 60)
        #expect(untrusted.status == 1, "\(untrusted.stdout) \(untrusted.stderr)")
        #expect(untrusted.stdout.contains("certificate verify failed"), "\(untrusted.stdout)")
    }

    /// A piped capture (not seekable) is kept in a temporary file, since a replay reads it twice.
    @Test func aCaptureOnStandardInput() throws {
        let capture = try Self.serverConversation()
        let (server, port) = try startPythonServer()
        defer { server.stop() }
        let piped = try runCommand("/bin/sh", ["-c", "cat '\(capture)' | '\(TestEnvironment.faultlineBinary)' replay - --upstream ws://127.0.0.1:\(port) --patience 2s"],
                                   timeout: 60)
        #expect(piped.status == 0, "\(piped.stdout) \(piped.stderr)")
        #expect(piped.stdout == "replayed 1 connection as the client (1 recorded): no differences")
        let garbage = try runCommand("/bin/sh", ["-c", "echo 'not a capture' | '\(TestEnvironment.faultlineBinary)' replay - --listen 127.0.0.1:0"])
        #expect(garbage.status == 2)
        #expect(garbage.stderr.contains("<stdin>: is not a recognized input"), "\(garbage.stderr)")
        #expect(!garbage.stderr.contains("/proc/self/fd"), "\(garbage.stderr)")
    }

    @Test func unusableInputExitsWith2() throws {
        let missing = try runFaultline(["replay", "/nonexistent/capture.jsonl", "--listen", "127.0.0.1:0"])
        #expect(missing.status == 2)
        #expect(missing.stderr.contains("/nonexistent/capture.jsonl"))
        let empty = TestEnvironment.temporaryDirectory("replay-e2e").appendingPathComponent("empty.jsonl").path
        try CaptureWriter(path: empty, header: CaptureHeader(tool: "test", startedAt: 0, source: "test")).close()
        let none = try runFaultline(["replay", empty, "--listen", "127.0.0.1:0"])
        #expect(none.status == 2)
        #expect(none.stderr.contains("no connections"))
        let capture = try Self.clientStory()
        let badURL = try runFaultline(["replay", capture, "--upstream", "http://127.0.0.1:1"])
        #expect(badURL.status == 2)
        #expect(badURL.stderr.contains("--upstream"))
        let both = try runFaultline(["replay", capture])
        #expect(both.status == 2)
        #expect(both.stderr.contains("exactly one of"))
        let caOnPlainWS = try runFaultline(["replay", capture, "--upstream", "ws://127.0.0.1:1", "--upstream-ca", "/nonexistent.pem"])
        #expect(caOnPlainWS.status == 2)
        #expect(caOnPlainWS.stderr.contains("--upstream-ca needs a wss:// upstream"))
        let certAsClient = try runFaultline(["replay", capture, "--upstream", "wss://127.0.0.1:1", "--tls-cert", "a.pem", "--tls-key", "b.pem"])
        #expect(certAsClient.status == 2)
        #expect(certAsClient.stderr.contains("--tls-cert and --tls-key apply to --listen only"))
    }
}
