import Capture
import Foundation
import JSON
import Testing
import TestSupport
import Vocabulary
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
    static func writeCapture(_ connections: [[Step]], name: String,
                             agent: (Int) -> String = { _ in "BirdRealtime/2.3" }) throws -> String {
        let path = TestEnvironment.temporaryDirectory("replay-e2e").appendingPathComponent(name).path
        let writer = try CaptureWriter(path: path, header: CaptureHeader(tool: "test", startedAt: 0, source: "test"))
        for (index, steps) in connections.enumerated() {
            let conn = index + 1
            let t0 = Micros(index) * 1_000_000
            try writer.append(.open(OpenRecord(conn: conn, t: t0, client: "127.0.0.1:\(40000 + conn)", server: "127.0.0.1:6001")))
            try writer.append(.upgrade(UpgradeRecord(conn: conn, t: t0 + 1_000, from: .client, method: "GET", target: "/app/key?protocol=7", headers: [
                HeaderField("Host", "127.0.0.1:6001"), HeaderField("Upgrade", "websocket"), HeaderField("Connection", "Upgrade"),
                HeaderField("Sec-WebSocket-Key", "x3JJHMbDL1EzLkh9GBhXDw=="), HeaderField("Sec-WebSocket-Version", "13"),
                HeaderField("User-Agent", agent(conn))])))
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

    func startPythonServer(_ arguments: [String] = []) throws -> (ChildProcess, String) {
        let server = try ChildProcess.python(TestEnvironment.path("Tests/Peers/replay_server.py"), arguments)
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
        // Without the CA the certificate is not trusted: the upstream is unreachable, an
        // unusable run (exit 2), not a difference.
        let untrusted = try runFaultline(["replay", capture, "--upstream", "wss://localhost:\(proxyPort)", "--patience", "1s"], timeout: 60)
        #expect(untrusted.status == 2, "\(untrusted.stdout) \(untrusted.stderr)")
        #expect(untrusted.stdout.isEmpty, "\(untrusted.stdout)")
        #expect(untrusted.stderr.contains("cannot reach wss://localhost:\(proxyPort): TLS handshake"), "\(untrusted.stderr)")
        #expect(untrusted.stderr.contains("certificate verify failed"), "\(untrusted.stderr)")
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

    /// Nothing listening, a name that does not resolve, a server that never answers the
    /// upgrade: the run is unusable (exit 2, one line on standard error), not "2 differences".
    @Test func anUnreachableUpstreamIsAnErrorNotADifference() throws {
        let capture = try Self.clientStory()
        let refused = try runFaultline(["replay", capture, "--upstream", "ws://127.0.0.1:\(TestEnvironment.freePort())", "--speed", "max"])
        #expect(refused.status == 2, "\(refused.stdout) \(refused.stderr)")
        #expect(refused.stdout.isEmpty, "\(refused.stdout)")
        #expect(refused.stderr.contains("connection refused; nothing was replayed"), "\(refused.stderr)")
        let unresolved = try runFaultline(["replay", capture, "--upstream", "ws://no-such-host.invalid:80", "--speed", "max"])
        #expect(unresolved.status == 2, "\(unresolved.stdout) \(unresolved.stderr)")
        #expect(unresolved.stderr.contains("cannot reach ws://no-such-host.invalid:80"), "\(unresolved.stderr)")
        let silent = try ChildProcess.python(TestEnvironment.path("Tests/Peers/replay_silent_server.py"))
        defer { silent.stop() }
        let ready = try #require(silent.waitForLine(timeout: 20) { $0.hasPrefix("READY ") }, "server: \(silent.errorOutput)")
        let port = ready.dropFirst("READY ".count)
        let timedOut = try runFaultline(["replay", capture, "--upstream", "ws://127.0.0.1:\(port)", "--connect-timeout", "1s"])
        #expect(timedOut.status == 2, "\(timedOut.stdout) \(timedOut.stderr)")
        #expect(timedOut.stderr.contains("no answer to the upgrade request within 1s; nothing was replayed"), "\(timedOut.stderr)")
    }

    // MARK: Timer events, others' events, no idle waiting

    static let tick = #"{"event":"tick","data":{"n":7}}"#

    /// The server conversation with the server's own `tick` every 300 ms in between
    /// (replay_server.py --tick 0.3 sends those, with other numbers).
    static func tickingConversation() throws -> String {
        try writeCapture([[
            .server(5_000, established), .client(20_000, subscribe), .server(25_000, succeeded),
            .server(300_000, tick), .server(600_000, tick), .server(900_000, tick), .client(1_000_000, typing),
            .server(1_005_000, typingAck), .server(1_200_000, tick), .client(1_500_000, bye),
            .close(1_505_000, .server, 4009, "bye"), .close(1_507_000, .client, 4009, "bye"),
        ]], name: "ticking-conversation.jsonl")
    }

    @Test func timerEventsOfAPythonServerAreMatchedLoosely() throws {
        let capture = try Self.tickingConversation()
        let (ticking, tickingPort) = try startPythonServer(["--tick", "0.3"])
        defer { ticking.stop() }
        let matched = try runFaultline(["replay", capture, "--upstream", "ws://127.0.0.1:\(tickingPort)", "--patience", "2s"])
        #expect(matched.status == 0, "\(matched.stdout) \(matched.stderr)")
        #expect(matched.stdout.hasPrefix("not lined up: tick (the server's own timer, matched loosely): 4 recorded, "), "\(matched.stdout)")
        #expect(matched.stdout.hasSuffix("replayed 1 connection as the client (1 recorded): no differences"))

        // A server whose timer stopped: a difference, with the counts; unless the event is ignored.
        let (silent, silentPort) = try startPythonServer()
        defer { silent.stop() }
        let stopped = try runFaultline(["replay", capture, "--upstream", "ws://127.0.0.1:\(silentPort)", "--patience", "2s"])
        #expect(stopped.status == 1, "\(stopped.stdout) \(stopped.stderr)")
        #expect(stopped.stdout.contains("missing  tick: 0 in "), "\(stopped.stdout)")
        #expect(stopped.stdout.contains("  missing  1: 1 tick"), "\(stopped.stdout)")
        let ignored = try runFaultline(["replay", capture, "--upstream", "ws://127.0.0.1:\(silentPort)", "--patience", "2s",
                                        "--ignore-event", "tick"])
        #expect(ignored.status == 0, "\(ignored.stdout) \(ignored.stderr)")
        #expect(ignored.stdout.contains("not lined up: tick (--ignore-event): 4 recorded, 0 live"), "\(ignored.stdout)")

        // No idle waiting: at --speed max nothing waits for the ticks the recording has
        // between the client's frames. Waiting for them would take the 10 minutes of
        // patience, far beyond this run's bound.
        let fast = try runFaultline(["replay", capture, "--upstream", "ws://127.0.0.1:\(silentPort)", "--speed", "max",
                                     "--patience", "10m"], timeout: 60)
        #expect(fast.status == 0, "\(fast.stdout) \(fast.stderr)")
    }

    /// Records `faultline sim client --clients 2` through the proxy to a sim server that
    /// pushes `sim-tick` every 400 ms; the clients send client events every 300 ms, which
    /// the server relays to the other client.
    func recordSimSession() throws -> String {
        let capture = TestEnvironment.temporaryDirectory("replay-e2e").appendingPathComponent("sim-two-clients.jsonl").path
        let server = try ChildProcess.faultline(["sim", "server", "--listen", "127.0.0.1:0", "--event-interval", "400ms", "--seed", "3"])
        defer { server.stop() }
        let serverPort = try listeningPort(of: server, "the sim server")
        let proxy = try ChildProcess.faultline(["proxy", "--listen", "127.0.0.1:0", "--upstream", "ws://127.0.0.1:\(serverPort)",
                                                "--record", capture])
        defer { proxy.stop() }
        let proxyPort = try listeningPort(of: proxy, "the proxy")
        let clients = try runFaultline(["sim", "client", "--url", "ws://127.0.0.1:\(proxyPort)/app/sim-key", "--clients", "2",
                                        "--trigger-interval", "300ms", "--duration", "2s", "--seed", "3"], timeout: 60)
        #expect(clients.status == 0, "\(clients.stderr)")
        _ = try stopRecordingProxy(proxy, capture: capture)
        return capture
    }

    /// Against a fresh sim server (its ticks at other moments with other numbers, and no
    /// second client to relay client events or join the presence channel), one client's
    /// replay at --speed max has no differences and waits for none of those frames.
    @Test func asTheClientAgainstTheSimServerTimerAndOthersFramesAreNotWaitedFor() throws {
        let capture = try recordSimSession()
        let server = try ChildProcess.faultline(["sim", "server", "--listen", "127.0.0.1:0", "--event-interval", "400ms"])
        defer { server.stop() }
        let port = try listeningPort(of: server, "the sim server")
        let result = try runFaultline(["replay", capture, "--upstream", "ws://127.0.0.1:\(port)", "--client", "client-1",
                                       "--app-secret", "sim-secret", "--speed", "max", "--patience", "10m"], timeout: 60)
        #expect(result.status == 0, "\(result.stdout) \(result.stderr)")
        #expect(result.stdout.contains("not lined up: sim-tick (the server's own timer, matched loosely): "), "\(result.stdout)")
        #expect(result.stdout.contains("not lined up: client-"), "\(result.stdout)")
        #expect(result.stdout.contains("(caused by other clients, not compared)"), "\(result.stdout)")
        #expect(result.stdout.hasSuffix("replayed 1 connection as the client (1 recorded): no differences"), "\(result.stdout)")
    }

    // MARK: Every client, one name

    /// Two clients told apart by their User-Agent: "Alpha/1" (told to reconnect, 4200) and
    /// "Beta/1" (terminated, 4009). Beta connects first and still gets Beta's story; a
    /// "Gamma/1" the recording does not have is refused.
    @Test func allClientsMatchesPythonClientsByKey() throws {
        func connection(closeCode: UInt16, reason: String) -> [Step] {
            [.server(5_000, Self.established), .client(20_000, Self.subscribe), .server(25_000, Self.succeeded),
             .client(40_000, Self.typing), .close(60_000, .server, closeCode, reason), .close(62_000, .client, closeCode, reason)]
        }
        let capture = try Self.writeCapture([connection(closeCode: 4200, reason: "reconnect now"), connection(closeCode: 4009, reason: "bye")],
                                            name: "two-clients.jsonl", agent: { $0 == 1 ? "Alpha/1" : "Beta/1" })
        let replay = try ChildProcess.faultline(["replay", capture, "--listen", "127.0.0.1:0", "--all-clients", "--patience", "30s"])
        defer { replay.stop() }
        let port = try listeningPort(of: replay, "the replay")
        // A client the recording does not have: refused (503), reported, nothing replayed to it.
        let stranger = try ChildProcess.python(TestEnvironment.path("Tests/Peers/replay_client.py"),
                                               ["ws://127.0.0.1:\(port)/app/key?protocol=7", "--user-agent", "Gamma/1"])
        defer { stranger.stop() }
        #expect(stranger.waitForExit(timeout: 30) == 1, "client: \(stranger.output)")
        #expect(stranger.output.first?.contains("503") == true, "client: \(stranger.output)")
        for (agent, closed) in [("Beta/1", "CLOSED 4009 bye"), ("Alpha/1", "CLOSED 4200 reconnect now")] {
            let client = try ChildProcess.python(TestEnvironment.path("Tests/Peers/replay_client.py"),
                                                 ["ws://127.0.0.1:\(port)/app/key?protocol=7", "--user-agent", agent])
            defer { client.stop() }
            #expect(client.waitForExit(timeout: 30) == 0, "client: \(client.output)")
            #expect(client.output == ["GOT bird_internal:subscription_succeeded", closed])
        }
        #expect(replay.waitForExit(timeout: 20) == 1, "replay: \(replay.output) \(replay.errorOutput)")
        #expect(replay.output.contains { $0.hasPrefix("(no recorded client) conn 2 +") && $0.contains("extra-connection")
                && $0.contains("(key 127.0.0.1 | Gamma/1 | /app/key?protocol=7)") }, "\(replay.output)")
        #expect(replay.output.last == "replayed 2 connections as the server (2 recorded): 1 difference (1 extra-connection)")
    }

    static var demoCapture: String { TestEnvironment.path("Captures/replay/demo-10s.jsonl") }

    /// `--client` takes the analyzer's client id or key, and says which clients there are.
    @Test func clientsAreNamedAsAnalyzeNamesThem() throws {
        let server = try ChildProcess.faultline(["sim", "server", "--listen", "127.0.0.1:0", "--event-interval", "0"])
        defer { server.stop() }
        let port = try listeningPort(of: server, "the sim server")
        let key = "127.0.0.1 | faultline-sim/0.1.0 (client 3) | /app/sim-key?protocol=7&client=faultline-sim&version=0.1.0"
        let analyzed = try runFaultline(["analyze", Self.demoCapture])
        #expect(analyzed.stdout.contains("client-3  key \(key)  connections: 3, 8"), "\(analyzed.stdout)")
        for name in ["client-3", key] {
            let result = try runFaultline(["replay", Self.demoCapture, "--upstream", "ws://127.0.0.1:\(port)", "--client", name,
                                           "--app-secret", "sim-secret", "--speed", "max", "--patience", "1s", "--format", "json"])
            let json = try JSONParser.parse(result.stdout)
            #expect(json["connections_recorded"]?.intValue == 2, "\(result.stdout) \(result.stderr)")
            #expect(json["deviations"]?.arrayValue?.allSatisfy { [3, 8].contains($0["conn"]?.intValue) } == true)
        }
        let unknown = try runFaultline(["replay", Self.demoCapture, "--listen", "127.0.0.1:0", "--client", "client-9"])
        #expect(unknown.status == 2)
        #expect(unknown.stderr.contains("no client matches \"client-9\" (clients in the capture: client-1 \"127.0.0.1 | faultline-sim/0.1.0 (client 1)"),
                "\(unknown.stderr)")
    }

    /// The demo's capture (five sim clients, the demo's faults) replayed as the server to
    /// five sim clients at once, through a recording proxy: `analyze` of that new capture
    /// shows each client's recorded state transitions, client by client (matched by key).
    @Test func allClientsReproducesTheDemosLifecycles() throws {
        let live = TestEnvironment.temporaryDirectory("replay-e2e").appendingPathComponent("demo-replayed.jsonl").path
        let replay = try ChildProcess.faultline(["replay", Self.demoCapture, "--listen", "127.0.0.1:0", "--all-clients", "--speed", "max"])
        defer { replay.stop() }
        let replayPort = try listeningPort(of: replay, "the replay")
        let proxy = try ChildProcess.faultline(["proxy", "--listen", "127.0.0.1:0", "--upstream", "ws://127.0.0.1:\(replayPort)",
                                                "--record", live])
        defer { proxy.stop() }
        let proxyPort = try listeningPort(of: proxy, "the proxy")
        // The demo's clients: seed 1 (the same backoff draws), 1 s pong timeout, user demo-user-N.
        let clients = try runFaultline(["sim", "client", "--url", "ws://127.0.0.1:\(proxyPort)/app/sim-key", "--clients", "5",
                                        "--seed", "1", "--pong-timeout", "1s", "--trigger-interval", "2s", "--user", "demo-user",
                                        "--duration", "6s"], timeout: 60)
        #expect(clients.status == 0, "\(clients.stderr)")
        #expect(replay.waitForExit(timeout: 30) != nil, "replay: \(replay.output) \(replay.errorOutput)")
        #expect(replay.output.last?.hasPrefix("replayed 10 connections as the server (10 recorded)") == true, "\(replay.output)")
        _ = try stopRecordingProxy(proxy, capture: live)
        let recorded = try lifecycles(Self.demoCapture), replayed = try lifecycles(live)
        #expect(recorded.count == 5)
        for (key, transitions) in recorded {
            #expect(replayed[key] == transitions, "client \(key)")
        }
    }

    /// Each client's state transitions in `analyze` (with the demo's timings), by key:
    /// "connected -> failed (close 4009 from server)". The cause is kept for close frames
    /// only: the replay resets client 4's connection as recorded, but the proxy in front
    /// relays that reset to the client as a FIN (the transition is the same).
    func lifecycles(_ capture: String) throws -> [String: [String]] {
        let result = try runFaultline(["analyze", capture, "--pong-timeout", "1", "--resubscribe-window", "3", "--format", "json"])
        let json = try JSONParser.parse(result.stdout)
        var keys: [String: String] = [:]
        for client in json["clients"]?.arrayValue ?? [] {
            if let id = client["id"]?.stringValue, let key = client["key"]?.stringValue { keys[id] = key }
        }
        var out: [String: [String]] = [:]
        for transition in json["transitions"]?.arrayValue ?? [] {
            guard let id = transition["client"]?.stringValue, let key = keys[id] else { continue }
            let cause = transition["cause"]?.stringValue ?? ""
            out[key, default: []].append("\(transition["from"]?.stringValue ?? "-") -> \(transition["to"]?.stringValue ?? "-")"
                                         + (cause.hasPrefix("close") ? " (\(cause))" : ""))
        }
        return out
    }
}
