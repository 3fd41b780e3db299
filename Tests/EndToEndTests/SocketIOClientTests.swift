import Foundation
import JSON
import Testing
import TestSupport

/// The socketio pack against two real peers: python-socketio 5.18's `Client` (websocket
/// transport, through websocket-client) and python-socketio's own `AsyncServer` as an ASGI
/// app on uvicorn (Tests/Peers/socketio_peers.py), with `faultline proxy` between them and
/// a fault per scenario. Each scenario states, before it runs, the verdict the library's
/// own source promises (files under .venv/lib/python3*/site-packages/), and then asserts
/// that `analyze` with the pack's spec finds exactly that: no false error, no missed one.
///
/// Timings are shortened with the peers' own options: the server pings every 1 s and waits
/// 0.5 s (announced as pingInterval 1000, pingTimeout 500); the client reconnects after
/// reconnection_delay 0.2 s doubling to reconnection_delay_max 0.8 s, randomization_factor
/// 0.05 s. The spec is the built-in `socketio` with the same three numbers (base, cap,
/// jitterSeconds) put in, so it is the same policy at the test's scale.
@Suite(.serialized) struct SocketIOClientTests {
    static let peers = TestEnvironment.path("Tests/Peers/socketio_peers.py")

    /// One run: the server (ARGS), the recording proxy with FAULTS, the client (ARGS) to
    /// its end; then the client's lines and the analysis of the capture.
    struct Run {
        let client: [PeerLine]
        let report: JSONValue

        var findings: [String] { (report["findings"]?.arrayValue ?? []).compactMap { $0["rule"]?.stringValue } }
        var undetermined: [String] { (report["undetermined"]?.arrayValue ?? []).compactMap { $0["rule"]?.stringValue } }
        var messages: [String] { (report["findings"]?.arrayValue ?? []).compactMap { $0["message"]?.stringValue } }
        var connections: [JSONValue] { report["clients"]?.arrayValue?.first?["connections"]?.arrayValue ?? [] }
        var clientCount: Int { report["clients"]?.arrayValue?.count ?? 0 }
        var finalState: String? { report["clients"]?.arrayValue?.first?["state"]?.stringValue }
        var ends: [String] { connections.compactMap { $0["end"]?.stringValue } }
        var connects: Int { client.of(kind: "connect").count }
    }

    /// The built-in spec at the test's scale: the same policy, the client's shortened numbers.
    static func shortSpec(in directory: URL) throws -> String {
        let shown = try runFaultline(["specs", "show", "socketio"])
        #expect(shown.status == 0)
        var text = shown.stdout
        for (from, to) in [(#""base": 1,"#, #""base": 0.2,"#), (#""cap": 5,"#, #""cap": 0.8,"#),
                           (#""jitterSeconds": 0.5,"#, #""jitterSeconds": 0.05,"#)] {
            #expect(text.contains(from), "the built-in socketio spec no longer says \(from)")
            text = text.replacingOccurrences(of: from, with: to)
        }
        let path = directory.appendingPathComponent("socketio-short.json").path
        try text.write(toFile: path, atomically: true, encoding: .utf8)
        return path
    }

    /// `sim`: the server is `faultline sim server --protocol socketio ARGS` instead of
    /// python-socketio's.
    static func run(server serverArguments: [String] = [], sim: Bool = false, faults: [String] = [],
                    client clientArguments: [String] = [], spec: String? = nil) throws -> Run {
        let directory = TestEnvironment.temporaryDirectory("faultline-socketio")
        let capture = directory.appendingPathComponent("capture.jsonl").path
        let server: ChildProcess
        let serverPort: Int
        if sim {
            server = try ChildProcess.faultline(["sim", "server", "--protocol", "socketio", "--listen", "127.0.0.1:0"] + serverArguments)
            serverPort = try listeningPort(of: server, "the sim server")
        } else {
            server = try ChildProcess.python(peers, ["server"] + serverArguments)
            let listening = try #require(server.waitForLine(timeout: 20) { $0.contains("\"listening\"") },
                                         "the Socket.IO server did not start: \(server.errorOutput.joined(separator: "\n"))")
            serverPort = Int(try #require(PeerLine(listening)["port"]?.intValue))
        }
        defer { server.stop() }
        let proxy = try ChildProcess.faultline(["proxy", "--listen", "127.0.0.1:0", "--upstream", "ws://127.0.0.1:\(serverPort)",
                                                "--record", capture] + faults.flatMap { ["--fault", $0] })
        defer { proxy.stop() }
        let proxyPort = try listeningPort(of: proxy, "the proxy")
        let client = try peerLines([peers, "client", "http://127.0.0.1:\(proxyPort)", "--delay", "0.2", "--delay-max", "0.8"]
                                   + clientArguments, timeout: 30)
        _ = try stopRecordingProxy(proxy, capture: capture)
        let specPath = try spec ?? shortSpec(in: directory)
        let analysis = try runFaultline(["analyze", capture, "--spec", specPath, "--format", "json"])
        #expect(analysis.status == 0 || analysis.status == 1, "analyze failed: \(analysis.stderr)")
        return Run(client: client, report: try JSONParser.parse(analysis.stdout))
    }

    @Test func aCleanSessionHasNoFinding() throws {
        // engineio/client.py `_receive_packet`: every server PING is answered with a PONG at
        // once; socketio/client.py `disconnect`: the app's disconnect sends 41 and closes
        // with 1000. Promised: one connection, every ping answered (stale.pong-missing passes),
        // state disconnected, no finding.
        let run = try Self.run(client: ["--hold", "1.4"])
        #expect(run.connects == 1)
        #expect(run.clientCount == 1 && run.connections.count == 1)
        #expect(run.findings == [] && run.undetermined == [])
        #expect(run.finalState == "disconnected")
        #expect(run.ends == ["close 1000 from client"])
    }

    @Test func aFINIsRetriedWithinTheBackoff() throws {
        // socketio/client.py `_handle_eio_disconnect`: a dropped transport while connected
        // starts `_handle_reconnect`, whose first delay is reconnection_delay (0.2 s) +
        // randomization_factor * (2 * random() - 1). Promised: a second connection about
        // 0.2 s later, no finding.
        let run = try Self.run(faults: ["drop,conn=1,after=700ms"], client: ["--connects", "2"])
        #expect(run.connects == 2)
        #expect(run.connections.count == 2)
        #expect(run.ends.first == "FIN from server")
        #expect(run.findings == [] && run.undetermined == [])
    }

    @Test func anRSTIsRetriedWithinTheBackoff() throws {
        // The same path as a FIN (`_read_loop_websocket` ends on the closed socket, then
        // `_handle_reconnect`). Promised: a second connection within 0.2 +- 0.05 s, no finding.
        let run = try Self.run(faults: ["reset,conn=1,after=700ms"], client: ["--connects", "2"])
        #expect(run.connects == 2)
        #expect(run.ends.first == "RST from server")
        #expect(run.findings == [] && run.undetermined == [])
    }

    @Test func aServerDisconnectIsFinal() throws {
        // socketio/client.py `_handle_disconnect`: a 41 on '/' marks the client disconnected
        // and calls eio.disconnect() (engine.io close packet, close 1000 from the client),
        // never `_handle_reconnect`. The spec takes the server's 41 as final
        // (`honoursServerEndings`), so a retry would be failed.retried. Promised: one
        // connection ended by the client's 1000, state failed, no retry in the 1.5 s
        // watched after it, no finding.
        let run = try Self.run(server: ["--disconnect-after", "0.5"], client: ["--connects", "2", "--hold", "1.5"])
        let after = try #require(run.client.of(kind: "after_server_disconnect").first)
        #expect(after["connects"]?.intValue == 1 && after["connected"] == .bool(false))
        #expect(run.connections.count == 1)
        #expect(run.ends == ["close 1000 from client"])
        #expect(run.finalState == "failed")
        #expect(run.findings == [] && run.undetermined == [])
    }

    @Test func stalledServerPingsEndTheConnectionAndTheClientReconnects() throws {
        // engine.io v4 gives both sides one deadline: engineio/async_socket.py
        // `_websocket_handler` (the server) closes a socket that sent nothing for
        // ping_interval + ping_timeout, and engineio/client.py `_read_loop_websocket` (the
        // client) times its recv out after the open packet's pingInterval + pingTimeout
        // (1.5 s). With stall-pings the client hears no ping (and so sends no pong): the
        // server's close 1000 is the end on the wire (the client's own timeout sends
        // nothing), then `_handle_reconnect` retries after 0.2 +- 0.05 s. Promised: two
        // connections, the first ended by the server within the 1.5 s + tolerance the
        // spec allows (stale.close-missing passes), no finding.
        let run = try Self.run(faults: ["stall-pings,conn=1,after=300ms"], client: ["--connects", "2", "--run", "8"])
        #expect(run.connects == 2)
        #expect(run.connections.count == 2)
        #expect(run.ends.first == "close 1000 from server")
        #expect(run.findings == [] && run.undetermined == [])
    }

    @Test func aBlackholeShowsTheClientAbandonsItsStaleSocketOpen() throws {
        // engineio/client.py `_read_loop_websocket`: on the recv timeout ("Server has stopped
        // communicating") it only breaks its loop; neither it nor `_write_loop` calls
        // `self.ws.close()`, so the dead socket stays open (no close frame, no FIN) while
        // `_handle_reconnect` opens a new one; it ends when the process exits. With both
        // directions blackholed nothing else ends it (the server's close is swallowed).
        // Promised, as the library's own code does: stale.close-missing (no close within
        // pingInterval + pingTimeout + tolerance), stale.close-code (ended by a FIN with no
        // close frame). The retry overlaps the open socket, so it is grouped as a second
        // client and the first one's reconnect.missing is reported (undetermined when the
        // capture ends inside its window): an artifact of grouping, not the library's.
        let run = try Self.run(faults: ["blackhole,conn=1,after=300ms"], client: ["--connects", "2", "--hold", "0.6", "--run", "8"])
        #expect(run.connects == 2)
        #expect(run.clientCount == 2)
        #expect(run.findings.filter { $0 != "reconnect.missing" }.sorted() == ["stale.close-code", "stale.close-missing"])
        #expect((run.findings + run.undetermined).filter { $0 == "reconnect.missing" }.count == 1)
        #expect(run.undetermined.allSatisfy { $0 == "reconnect.missing" })
    }

    @Test func refusedReconnectsBackOffExponentially() throws {
        // socketio/client.py `_handle_reconnect`: a refused attempt (`connect(retry=False)`
        // raising ConnectionError) doubles the delay: 0.2, 0.4, then 0.8 s (capped), each
        // +- 0.05 s. Promised: attempts 2 and 3 refused with 503, attempt 4 connects, no finding.
        let run = try Self.run(faults: ["drop,conn=1,after=500ms", "refuse-http:503,conn=2-3"],
                               client: ["--connects", "2", "--run", "8"])
        #expect(run.connects == 2)
        #expect(run.connections.count == 4)
        #expect(run.findings == [] && run.undetermined == [])
    }

    @Test func aCloseOnTheNamespaceAnswerIsRetriedByKind() throws {
        // `close:4000,on-kind=subscription_succeeded,after=1s` closes once the server's
        // `40{"sid":..}` has been seen (the fault knows it by kind only) and the connection
        // is 1 s old. A close while `Client.connect` still waits for its namespaces
        // (socketio/client.py `connect`, before `self.connected = True`) would fail the
        // first connect with "Unexpected connection error" instead, which its `retry`
        // does not cover (that retries only `eio.connect`); a loaded machine makes that likely. engine.io has no close codes:
        // `_read_loop_websocket` ends, then `_handle_reconnect`. Promised: a second
        // connection within the backoff, no finding (4000 is in no band: backoff).
        let run = try Self.run(faults: ["close:4000,on-kind=subscription_succeeded,after=1s,conn=1"],
                               client: ["--connects", "2", "--hold", "0.3"])
        #expect(run.connects == 2)
        #expect(run.ends.first == "close 4000 from server")
        #expect(run.findings == [] && run.undetermined == [])
    }

    @Test func aClientConfiguredOffItsSpecIsCaught() throws {
        // The same library told reconnection_delay=1 (and randomization_factor 0.05):
        // `_handle_reconnect` waits 1 +- 0.05 s, but the spec promises 0.2 +- 0.05 s for
        // attempt 1. Promised: exactly one backoff.bound, on the retry.
        let run = try Self.run(faults: ["drop,conn=1,after=500ms"], client: ["--connects", "2", "--delay", "1", "--delay-max", "1"])
        #expect(run.connects == 2)
        #expect(run.findings == ["backoff.bound"])
        #expect(run.messages.first?.contains("for attempt 1") == true)
    }

    @Test func theSimServerServesTheRealClient() throws {
        // `faultline sim server --protocol socketio` in place of python-socketio's server
        // (the same promises of socketio/client.py and engineio/client.py as above): the
        // client connects, answers the sim's pings (every 1 s; the sim waits 2 s for each
        // pong, so a loaded machine does not end the session), hears its events, is
        // retried after a FIN within the backoff, and disconnects. Promised: two
        // connections, no finding.
        let run = try Self.run(server: ["--ping-interval", "1s", "--ping-timeout", "2s", "--event-interval", "300ms"],
                               sim: true, faults: ["drop,conn=1,after=1200ms"], client: ["--connects", "2"])
        #expect(run.connects == 2)
        #expect(!run.client.of(kind: "tick").isEmpty)
        #expect(run.connections.count == 2)
        #expect(run.findings == [], "\(run.messages)")
        #expect(run.undetermined == [], "\(run.report["undetermined"].map { JSONWriter.serialize($0) } ?? "")")
    }
}
