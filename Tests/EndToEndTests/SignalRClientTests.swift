import Capture
import Foundation
import Glibc
import JSON
import Testing
import TestSupport

/// The real SignalR client from PyPI, pysignalr 1.3.3 (over websockets 17.4), through
/// `faultline proxy` with faults, judged with the `signalr` spec. No SignalR server exists
/// on PyPI or in Debian, so the hub is `faultline sim server --protocol signalr` (the JSON
/// hub protocol: handshake, keep-alive pings, a periodic invocation, close messages).
///
/// The client's reconnect timings are shortened with SignalRClient's own options
/// (`retry_sleep` 0.1 s, `retry_multiplier` 2, `retry_count` 4), and the spec's stepped
/// table and give-up are the same schedule shortened alike, so each scenario runs in
/// about a second.
///
/// The promises, read in the installed packages (`.venv/lib/python3*/site-packages/`):
/// - P1 `pysignalr/transport/websocket.py` `WebsocketTransport._loop` catches
///   `ConnectionClosed` (close frame, FIN, RST) inside `async for conn in connect(...)`;
///   pysignalr replaces websockets' `connect.__aiter__` (`pysignalr/__init__.py`
///   `__aiter__`), whose `else` branch after a connection that succeeded resets its backoff
///   and connects again with no sleep: attempt 1 waits 0 s.
/// - P2 the same `__aiter__` turns a failed upgrade (`InvalidHandshake`: any refused HTTP
///   status) or a timeout into `NegotiationFailure`; `WebsocketTransport.run` then
///   decrements `retry_count`, multiplies `retry_sleep` by `retry_multiplier` and sleeps
///   it: attempt 2 waits 0.2 s, attempt 3 0.4 s, attempt 4 0.8 s; the failure that brings
///   `retry_count` to 0 is raised: the client gives up after 4 failed attempts.
/// - P3 `pysignalr/client.py` `SignalRClient._on_close_message`: a close message (type 7)
///   with an `error` raises `ServerError` in the body of `_loop`'s `async for`, which
///   catches only `ConnectionClosed`, and `run` retries only `NegotiationFailure`: the
///   client stops, whatever `allowReconnect` says. Without an error it does nothing; the
///   client reconnects when the WebSocket closes (P1), whatever `allowReconnect` says.
///   The spec judges the close message by the hub protocol (`allowReconnect: true` owes a
///   reconnect, anything else is final): pysignalr agrees with it after
///   `{"allowReconnect":true}` (reconnect) and after `{"error":..}` (stop), and is reported
///   after `{"allowReconnect":false}` without an error, where it reconnects (failed.retried).
/// - P4 `WebsocketTransport._keepalive` pings every `signalr_ping_interval` whatever the
///   server sends, and nothing in `_process` times the server out: stalled server pings
///   leave the connection up. The `signalr` spec judges only the keep-alive (the
///   `serverTimeout` model's `stale.ping-missing`, every 15 s); judged by the JavaScript
///   client's keep-alive and server timeout
///   (the `serverTimeout` liveness model, `serverTimeoutSpec`), its keep-alive passes (a
///   message at least every `signalr_ping_interval`) and a silent hub is never timed out
///   (`stale.close-missing`).
@Suite(.serialized) struct SignalRClientTests {
    /// The client's shortened reconnect options (`SignalRClient`'s own).
    static let retry = ["--retry-sleep", "0.1", "--retry-multiplier", "2", "--retry-count", "4"]
    /// The same schedule as the spec's stepped table: attempt 1 at once (P1), then P2's.
    static let steps = "[0, 0.2, 0.4, 0.8]"

    struct Run {
        var client: [String]
        var capture: String
        var findings: [String]
        /// The (only) client's state at the end of the capture.
        var finalState: String?
    }

    /// The built-in `signalr` spec with its steps and give-up shortened like the client's.
    static func shortenedSpec() throws -> String {
        let text = try String(contentsOfFile: TestEnvironment.path("Sources/Lifecycle/Specs/signalr.json"), encoding: .utf8)
        let start = try #require(text.range(of: "\"steps\": ["))
        let end = try #require(text.range(of: "]", range: start.upperBound..<text.endIndex))
        let shortened = text.replacingCharacters(in: start.lowerBound..<end.upperBound, with: "\"steps\": \(steps)")
            .replacingOccurrences(of: "\"maxAttempts\": 10", with: "\"maxAttempts\": 4")
        #expect(shortened.contains("\"maxAttempts\": 4"))
        let path = TestEnvironment.temporaryDirectory("faultline-signalr").appendingPathComponent("signalr-short.json").path
        try shortened.write(toFile: path, atomically: true, encoding: .utf8)
        return path
    }

    /// The shortened spec with the JavaScript client's liveness, shortened too (its 15 s
    /// keep-alive and 30 s server timeout as 0.5 and 0.6 s): the `serverTimeout` model of
    /// docs/spec-format.md, whose rules are added to the spec's.
    static func serverTimeoutSpec() throws -> String {
        try specWith(stale: #"{"model": "serverTimeout", "interval": 0.5, "pongTimeout": 0.6, "closeCodes": {"from": 1000, "to": 1000}}"#,
                     rules: ["stale.ping-missing", "stale.close-missing", "stale.close-code"], name: "signalr-server-timeout.json")
    }

    /// The shortened spec with `stale` and the extra `rules`, written to `name`.
    static func specWith(stale: String, rules: [String], tolerance: Double? = nil, closeTimeout: Double? = nil,
                         name: String) throws -> String {
        let parsed = try JSONParser.parse(try String(contentsOfFile: try shortenedSpec(), encoding: .utf8))
        var object = try #require(parsed.objectValue)
        object["name"] = .string(String(name.prefix(while: { $0 != "." })))
        object["stale"] = try JSONParser.parse(stale)
        let listed = object["rules"]?.arrayValue ?? []
        object["rules"] = .array(listed + rules.filter { !listed.contains(.string($0)) }.map { .string($0) })
        if let tolerance { object["tolerances"] = try JSONParser.parse(#"{"timing": \#(tolerance), "immediate": 0.5}"#) }
        if let closeTimeout, var backoff = object["backoff"]?.objectValue {
            backoff["closeTimeout"] = .double(closeTimeout)
            object["backoff"] = .object(backoff)
        }
        let path = TestEnvironment.temporaryDirectory("faultline-signalr").appendingPathComponent(name).path
        try JSONWriter.serialize(.object(object)).write(toFile: path, atomically: true, encoding: .utf8)
        return path
    }

    /// The sim hub, the proxy with `faults`, and pysignalr for `seconds`; then the capture
    /// analyzed with the shortened spec (or `spec`), its findings' rule ids in order.
    static func run(server serverArguments: [String] = [], faults: [String] = [], seconds: Double = 1.5,
                    retry: [String] = retry, client clientArguments: [String] = ["--keep-alive", "0.3"],
                    spec: String? = nil) throws -> Run {
        let server = try ChildProcess.faultline(["sim", "server", "--protocol", "signalr", "--listen", "127.0.0.1:0",
                                                 "--event-interval", "200ms"] + serverArguments)
        defer { server.stop() }
        let serverPort = try listeningPort(of: server, "sim server")
        let capture = TestEnvironment.temporaryDirectory("faultline-signalr").appendingPathComponent("capture.jsonl").path
        let proxy = try ChildProcess.faultline(["proxy", "--listen", "127.0.0.1:0", "--upstream", "ws://127.0.0.1:\(serverPort)",
                                                "--record", capture] + faults.flatMap { ["--fault", $0] })
        defer { proxy.stop() }
        let proxyPort = try listeningPort(of: proxy, "proxy")
        let client = try ChildProcess(TestEnvironment.python,
                                      ["-u", TestEnvironment.path("Tests/Peers/signalr_client.py"), "ws://127.0.0.1:\(proxyPort)/hub",
                                       "--seconds", String(seconds)] + clientArguments + retry)
        defer { client.stop() }
        #expect(client.waitForExit(timeout: seconds + 20) == 0, "client: \(client.errorOutput.joined(separator: "\n"))")
        _ = try stopRecordingProxy(proxy, capture: capture)
        let report = try runFaultline(["analyze", capture, "--spec", try spec ?? shortenedSpec(), "--format", "json"])
        #expect(report.status == 0 || report.status == 1, "analyze: \(report.stderr)")
        let parsed = try JSONParser.parse(report.stdout)
        let findings = parsed["findings"]?.arrayValue ?? []
        return Run(client: client.output, capture: capture, findings: findings.compactMap { $0["rule"]?.stringValue },
                   finalState: parsed["clients"]?.arrayValue?.first?["state"]?.stringValue)
    }

    static func opens(_ run: Run) throws -> Int {
        try CaptureContents(path: run.capture).opens.count
    }

    @Test func aCleanSessionHasNoFinding() throws {
        // Promise: no drop, nothing to judge → no finding; the hub's invocations arrive.
        let run = try Self.run()
        #expect(run.findings == [])
        #expect(run.client.first == "open")
        #expect(run.client.contains { $0.hasPrefix("message sim-tick") })
        #expect(try Self.opens(run) == 1)
        let frames = try CaptureContents(path: run.capture).frames
        let pings = frames.filter { frame in
            guard frame.from == .client, let text = frame.text, let record = text.split(separator: "\u{1e}").first else { return false }
            return (try? JSONParser.parse(String(record)))?["type"]?.intValue == 6
        }
        #expect(!pings.isEmpty, "the client's keep-alive (P4)")
    }

    @Test func finAndRstAreRetriedAtOnce() throws {
        // P1: FIN and RST are a ConnectionClosed → attempt 1 at 0 s → no finding.
        for fault in ["drop,conn=1,after=400ms", "reset,conn=1,after=400ms"] {
            let run = try Self.run(faults: [fault])
            #expect(run.findings == [], "\(fault): \(run.findings)")
            #expect(try Self.opens(run) >= 2, "\(fault): \(run.client)")
        }
    }

    @Test func aCloseMessageThatAllowsReconnectIsFollowedByAReconnect() throws {
        // P3 without an error + P1: the hub's close 1000 after {"type":7,"allowReconnect":true}
        // is retried at once, as the spec's reconnect.missing demands → no finding.
        let run = try Self.run(server: ["--close-after", "400ms", "--close-code", "1000"], seconds: 1.2)
        #expect(run.findings == [])
        #expect(run.finalState != "failed")
        #expect(try Self.opens(run) >= 2, "\(run.client)")
        #expect(!run.client.contains { $0.hasPrefix("stopped") })
    }

    @Test func aCloseMessageWithAnErrorStopsTheClient() throws {
        // P3 with an error: ServerError, the client stops after one connection; the close
        // message has no allowReconnect, so it is final for the spec too → state failed,
        // nothing owed, no finding.
        let run = try Self.run(server: ["--close-after", "400ms", "--close-code", "1000", "--close-final"], seconds: 3)
        #expect(run.client.contains { $0.hasPrefix("stopped: ServerError") }, "\(run.client)")
        #expect(try Self.opens(run) == 1)
        #expect(run.findings == [])
        #expect(run.finalState == "failed")
    }

    @Test func aCloseMessageThatForbidsReconnectIsRetriedByPysignalr() throws {
        // P3 without an error + P1: after {"type":7,"allowReconnect":false} and the hub's
        // close 1000, pysignalr reconnects at once (it reads only `error`), which the hub
        // protocol forbids → one failed.retried per close message the client went past.
        let run = try Self.run(server: ["--close-after", "400ms", "--close-code", "1000", "--close-no-reconnect"], seconds: 1.2)
        let opens = try Self.opens(run)
        #expect(opens >= 2, "\(run.client)")
        #expect(!run.findings.isEmpty && run.findings.allSatisfy { $0 == "failed.retried" }, "\(run.findings)")
        #expect(run.findings.count == opens - 1, "\(run.findings), \(opens) connections")
    }

    @Test func refusedReconnectsWaitTheBackoff() throws {
        // P1 then P2: conn 2 at once and refused 503, conn 3 after 0.2 s, refused 403,
        // conn 4 after 0.4 s and up → every delay on the table → no finding.
        let run = try Self.run(faults: ["drop,conn=1,after=300ms", "refuse-http:503,conn=2", "refuse-http:403,conn=3"], seconds: 2)
        #expect(run.findings == [])
        #expect(try Self.opens(run) == 4, "\(run.client)")
    }

    @Test func theClientGivesUpAfterItsRetryCount() throws {
        // P2: four refused attempts (0, 0.2, 0.4, 0.8 s) and retry_count is spent: the
        // client raises NegotiationFailure and never retries → failed, no finding.
        let run = try Self.run(faults: ["drop,conn=1,after=300ms", "refuse-http:503,conn=2-9"], seconds: 4)
        #expect(run.client.contains { $0.hasPrefix("stopped: NegotiationFailure") }, "\(run.client)")
        #expect(try Self.opens(run) == 5)
        #expect(run.findings == [])
    }

    @Test func aSlowerBackoffThanTheSpecsIsCaught() throws {
        // A client configured with retry_multiplier 3 (its own option) where the spec says 2:
        // P2 makes attempt 3 wait 0.9 s > 0.4 + 0.25 s → exactly one backoff.bound.
        let slow = ["--retry-sleep", "0.1", "--retry-multiplier", "3", "--retry-count", "4"]
        let run = try Self.run(faults: ["drop,conn=1,after=300ms", "refuse-http:503,conn=2-3"], seconds: 2.5, retry: slow)
        #expect(run.findings == ["backoff.bound"], "\(run.client)")
    }

    @Test func messageFaultsActOnTheHubsRecordsByEventName() throws {
        // The relay decodes each record with the signalr entry: drop-message matches the
        // invocation's target, so the client hears no sim-tick; close on=EVENT starts after
        // the handshake answer, and the client reconnects at once (P1) → no finding.
        let dropped = try Self.run(faults: ["drop-message,event=sim-tick"], seconds: 1.2)
        #expect(!dropped.client.contains { $0.hasPrefix("message sim-tick") }, "\(dropped.client)")
        let frames = try CaptureContents(path: dropped.capture).frames
        #expect(frames.contains { $0.action == .dropped && $0.fault == "drop-message,event=sim-tick" })
        #expect(dropped.findings == [])
        let closed = try Self.run(faults: ["close:4000,conn=1,on=handshake"], seconds: 1.2)
        let close = try CaptureContents(path: closed.capture).frames.first { $0.opcode == .close }
        #expect(close?.conn == 1 && close?.closeCode == 4000 && close?.action == .injected)
        #expect(try Self.opens(closed) >= 2)
        #expect(closed.findings == [])
    }

    @Test func stalledServerPingsLeaveTheConnectionUp() throws {
        // P4: no server keep-alive, and pysignalr has no server timeout → one connection to
        // the end, no finding (the spec judges only the client's keep-alive).
        let run = try Self.run(server: ["--stall-pongs"], seconds: 1.2)
        #expect(try Self.opens(run) == 1)
        #expect(run.findings == [])
    }

    @Test func pysignalrsKeepAliveMeetsTheJavaScriptClientsMeasure() throws {
        // P4: a ping every signalr_ping_interval (0.3 s) whatever else it sends, so a
        // message at least every 0.5 s; the hub pings every 0.2 s and ticks every 0.2 s,
        // so no server timeout is due → no finding with the serverTimeout model.
        let run = try Self.run(server: ["--keep-alive-interval", "200ms"], seconds: 1.5, spec: try Self.serverTimeoutSpec())
        #expect(try Self.opens(run) == 1)
        #expect(run.findings == [])
    }

    @Test func aClientThatStopsItsKeepAliveIsFlagged() throws {
        // The built-in spec judges P4's keep-alive (stale.ping-missing under the
        // serverTimeout model, every 15 s), shortened here to 0.5 s; the client's own pings
        // are put off (signalr_ping_interval 100 s), so after its handshake message it sends
        // nothing → one stale.ping-missing, 0.75 s after the handshake. The hub keeps
        // talking, so no server timeout is due.
        let spec = try Self.specWith(stale: #"{"model": "serverTimeout", "interval": 0.5, "pongTimeout": 30, "closeCodes": {"from": 1000, "to": 1000}}"#,
                                     rules: [], name: "signalr-keep-alive.json")
        let run = try Self.run(server: ["--keep-alive-interval", "200ms"], seconds: 1.5, client: ["--keep-alive", "100"], spec: spec)
        #expect(try Self.opens(run) == 1)
        #expect(run.findings == ["stale.ping-missing"])
    }

    @Test func aSilentHubIsNeverTimedOutByPysignalr() throws {
        // The proxy swallows the hub's pings (stall-pings, dir s2c) and its sim-tick
        // invocations: after the handshake answer nothing reaches the client. P4: no server
        // timeout, so the connection stays up to the end → one stale.close-missing (the JS
        // client would have closed 0.6 s after the handshake), no reconnect. The script's
        // time then runs out and websockets closes the cancelled connection with 1011: a
        // close of a connection the model counts dead, so a stale one with a code outside
        // 1000 → stale.close-code.
        let run = try Self.run(server: ["--keep-alive-interval", "200ms"], faults: ["stall-pings", "drop-message,event=sim-tick"],
                               seconds: 1.5, spec: try Self.serverTimeoutSpec())
        let frames = try CaptureContents(path: run.capture).frames
        #expect(frames.contains { $0.action == .dropped && $0.fault == "stall-pings" }, "the hub's pings were swallowed")
        #expect(try Self.opens(run) == 1)
        #expect(frames.last { $0.from == .client && $0.opcode == .close }?.closeCode == 1011)
        #expect(run.findings == ["stale.close-missing", "stale.close-code"])
    }
}

/// A blackhole under pysignalr, in a suite of its own so it runs beside the serialized one:
/// it takes some 23 s, since websockets' `ping_timeout` (20 s) cannot be shortened.
@Suite struct SignalRBlackholeTests {
    /// Promise: pysignalr has no server timeout (P4), so only websockets' keepalive sees the
    /// dead path: `Connection.keepalive` (websockets/asyncio/connection.py) pings every
    /// `ping_interval` (0.5 s, SignalRClient's option) and, with no pong within its fixed
    /// `ping_timeout` (20 s), fails the connection with a close frame 1011, then waits the
    /// close timeout (`send_context`: SignalRClient passes `connection_timeout`, 1 s here, as
    /// `close_timeout`) for the server to end TCP and aborts it. `_loop` catches the
    /// `ConnectionClosed` and `__aiter__` reconnects at once (P1), counted from the close's end
    /// (`delayFrom: closed`, the close timeout 1 s). pysignalr's own pings are put off
    /// (`signalr_ping_interval` 100 s), so websockets' pings are the heartbeats of the
    /// `heartbeat` model: every 0.5 s, answered by the pong, closed with 1011 within 20 s of
    /// an unanswered one. The client keeps its promise: no client finding; the server's
    /// missing pong may be reported (its ping was lost in the blackhole).
    @Test func aBlackholeIsFoundByWebsocketsPingAndTheClientReconnects() throws {
        let spec = try SignalRClientTests.specWith(
            stale: #"{"model": "heartbeat", "interval": 0.5, "pongTimeout": 20, "closeCodes": {"from": 1011, "to": 1011}}"#,
            rules: ["stale.ping-missing", "stale.close-missing", "stale.close-code", "server.pong-missing"],
            tolerance: 0.5, closeTimeout: 1, name: "signalr-blackhole.json")
        let run = try SignalRClientTests.run(faults: ["blackhole,conn=1,after=0.6s"], seconds: 23.5,
                                             client: ["--keep-alive", "100", "--ping-interval", "0.5", "--connection-timeout", "1"],
                                             spec: spec)
        let capture = try CaptureContents(path: run.capture)
        let close = capture.frames.first { $0.conn == 1 && $0.from == .client && $0.opcode == .close }
        #expect(close?.closeCode == 1011, "websockets' keepalive ping timeout")
        #expect(capture.opens.count >= 2, "\(run.client)")
        #expect(Set(run.findings).isSubset(of: ["server.pong-missing"]), "\(run.findings)")
    }
}
