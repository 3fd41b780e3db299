import Capture
import Foundation
import Testing
import TestSupport

/// The real Phoenix Channels client phoenix-channels-python-client 0.4.1 (pinned in
/// Tools/test-peers.txt: the maintained Python client that speaks V1 and V2, heartbeats,
/// reconnects and rejoins by itself) through `faultline proxy` with faults. No Phoenix
/// server exists on PyPI or in Debian, so the upstream is `faultline sim server --protocol
/// phoenix`, which answers joins and heartbeats by ref (Sources/Sim/Phoenix).
///
/// Each scenario's verdict is what the library's own source promises, written before the
/// run (files under .venv/lib/python3*/site-packages/phoenix_channels_python_client/). The
/// capture is judged with `clientSpec`: the `phoenix` built-in spec's events and liveness
/// model with this client's policy and the test's short timings, since this client's
/// policy is not phoenix.js's (the `phoenix` spec then catches the difference: see
/// `aServerClose1000IsRetriedWhichPhoenixJSWouldNot`).
@Suite(.serialized) struct PhoenixClientTests {
    /// phoenix-channels-python-client 0.4.1 with `Tests/Peers/phoenix_client.py`'s options:
    /// - `reconnect_controller.py` `_compute_reconnect_delay`/`_equal_jitter`: equal jitter
    ///   of min(max_delay_s, base_delay_s * factor^attempt) (0.1 s doubling to 0.4 s), and
    ///   `supervisor.py` `_supervisor_loop` resets `attempt` after `stable_reset_s` (0.05 s)
    ///   of uptime; rapid-disconnect floors are off in the script.
    /// - `_classify_disconnect`: 1008 terminal; 1012 at least 1-5 s, 1013 at least 30-60 s;
    ///   every other code (1000 and 1001 too: `reconnect_on_normal_close`) or no close
    ///   frame retries. `_classify_connect_failure`: HTTP 403 terminal, others retry.
    /// - `_send_heartbeats`/`_heartbeat_loop`: a heartbeat every 0.3 s, one outstanding at a
    ///   time; the 0.6 s acknowledgement deadline expires one beat after an unanswered
    ///   heartbeat and `_force_close_connection` closes with `_FORCED_CLOSE_CODE` 4000.
    /// - the websockets `connect` it uses waits `close_timeout` (10 s) for the server's close
    ///   frame before ending the TCP connection, and reconnects only then.
    /// - `_rejoin_topics`: every subscribed topic is joined again after a reconnect.
    /// - `topic_runtime.py` `_dispatch_normal_message`/`_recover_channel`: a `phx_error` on a
    ///   joined topic of the live socket is rejoined after `_channel_rejoin_delay(attempt)`,
    ///   the same equal jitter from attempt 0 (0.05-0.1 s, then 0.1-0.2 s after a rejoin
    ///   whose join timed out after `join_timeout_s`, 10 s); a refused rejoin loses the topic.
    static let clientSpec = """
    {
      "name": "phoenix-channels-python-client",
      "description": "phoenix-channels-python-client 0.4.1 with the test's short timings.",
      "events": "phoenix",
      "states": {"initial": "connecting", "connecting": "connecting", "connected": "connected",
                 "disconnected": "closed", "failed": "closed"},
      "connectedOn": "upgrade",
      "closeCodes": [
        {"from": 1008, "to": 1008, "action": "fail"},
        {"from": 1012, "to": 1012, "action": "backoff", "delay": {"min": 1, "max": 5.4}},
        {"from": 1013, "to": 1013, "action": "backoff", "delay": {"min": 30, "max": 60.4}}
      ],
      "disconnectCodes": [1000],
      "refusalStatuses": [403],
      "backoff": {
        "resetOnConnect": true, "resetAfterUptime": 0.05, "delayFrom": "closed", "closeTimeout": 10,
        "phases": [{"kind": "exponential", "base": 0.1, "factor": 2, "cap": 0.4, "jitter": "equal",
                    "state": "reconnecting"}]
      },
      "stale": {"model": "heartbeat", "interval": 0.3, "pongTimeout": 0.25, "closeCodes": {"from": 4000, "to": 4000}},
      "channels": {"resubscribeWindow": 1,
                   "rejoin": {"kind": "exponential", "base": 0.1, "factor": 2, "cap": 0.4, "jitter": "equal", "joinTimeout": 10}},
      "tolerances": {"timing": 0.25, "immediate": 0.5},
      "rules": ["backoff.bound", "backoff.reset", "failed.retried", "reconnect.missing",
                "stale.ping-missing", "stale.close-missing", "stale.close-code",
                "channels.resubscribe", "channels.rejoin", "trigger.unsubscribed", "server.pong-missing"]
    }
    """

    struct Run {
        var client: [String]
        var capture: CaptureContents
        var capturePath: String
    }

    /// The client for `seconds` through a proxy with `faults` in front of the Phoenix sim.
    static func run(faults: [String], seconds: Double = 1.6, serializer: String = "v2", policy: String = "default") throws -> Run {
        let server = try ChildProcess.faultline(["sim", "server", "--protocol", "phoenix", "--listen", "127.0.0.1:0",
                                                 "--event-interval", "0"])
        defer { server.stop() }
        let serverPort = try listeningPort(of: server, "sim server")
        let capture = TestEnvironment.temporaryDirectory("faultline-phoenix").appendingPathComponent("capture.jsonl").path
        let proxy = try ChildProcess.faultline(["proxy", "--listen", "127.0.0.1:0", "--upstream", "ws://127.0.0.1:\(serverPort)",
                                                "--record", capture] + faults.flatMap { ["--fault", $0] })
        defer { proxy.stop() }
        let proxyPort = try listeningPort(of: proxy, "proxy")
        let client = try ChildProcess.python(TestEnvironment.path("Tests/Peers/phoenix_client.py"),
                                             ["ws://127.0.0.1:\(proxyPort)/socket/websocket", "room:lobby", String(seconds), serializer, policy])
        defer { client.stop() }
        #expect(client.waitForExit(timeout: seconds + 30) == 0, "client: \(client.output) \(client.errorOutput)")
        return Run(client: client.output, capture: try stopRecordingProxy(proxy, capture: capture), capturePath: capture)
    }

    /// The rule ids `analyze` finds in the capture with `spec` (a built-in name, or nil for
    /// `clientSpec`), with their counts.
    static func findings(_ run: Run, spec: String? = nil, specText: String = clientSpec) throws -> [String: Int] {
        var specArgument = spec ?? ""
        if spec == nil {
            let file = TestEnvironment.temporaryDirectory("faultline-phoenix-spec").appendingPathComponent("client.json")
            try specText.write(to: file, atomically: true, encoding: .utf8)
            specArgument = file.path
        }
        let result = try runFaultline(["analyze", run.capturePath, "--spec", specArgument, "--format", "json"])
        let report = try #require(try JSONSerialization.jsonObject(with: Data(result.stdout.utf8)) as? [String: Any],
                                  "not JSON: \(result.stdout) \(result.stderr)")
        var counts: [String: Int] = [:]
        for finding in try #require(report["findings"] as? [[String: Any]]) {
            counts[finding["rule"] as? String ?? "?", default: 0] += 1
        }
        return counts
    }

    /// How many phx_join messages the client sent on connection `conn`.
    static func joins(_ run: Run, conn: Int) -> Int {
        run.capture.frames.filter {
            $0.conn == conn && $0.from == .client && String(decoding: $0.payload, as: UTF8.self).contains("\"phx_join\"")
        }.count
    }

    /// Promise: `_send_heartbeats` beats every 0.3 s, the sim answers each by ref; the app's
    /// shutdown closes with 1000 → no finding.
    @Test func cleanJoinAndHeartbeats() throws {
        let run = try Self.run(faults: [])
        #expect(try Self.findings(run) == [:])
        #expect(run.capture.opens.count == 1)
        #expect(Self.joins(run, conn: 1) == 1)
        let beats = run.capture.frames.filter { $0.from == .client && String(decoding: $0.payload, as: UTF8.self).contains("\"heartbeat\"") }
        #expect(beats.count >= 3, "heartbeats: \(beats.count)")
    }

    /// The same client with the V1 serializer (`vsn=1.0.0`): objects instead of arrays,
    /// the same promise → no finding.
    @Test func cleanSessionWithTheV1Serializer() throws {
        let run = try Self.run(faults: [], serializer: "v1")
        #expect(try Self.findings(run) == [:])
        #expect(run.capture.upgrades.first?.target?.contains("vsn=1.0.0") == true)
    }

    /// Promise: a FIN without a close frame is classified by `_classify_disconnect(None)` as
    /// a retry; after 0.8 s of uptime (stable) the delay is 0.05-0.1 s, and
    /// `_rejoin_topics` joins room:lobby again → no finding.
    @Test func finIsRetriedAndTheChannelRejoined() throws {
        let run = try Self.run(faults: ["drop,after=0.8s,conn=1"])
        #expect(try Self.findings(run) == [:])
        #expect(run.capture.opens.count == 2)
        #expect(Self.joins(run, conn: 2) == 1, "the channel is rejoined after the reconnect")
    }

    /// Promise: an RST, as a FIN → no finding.
    @Test func rstIsRetried() throws {
        let run = try Self.run(faults: ["reset,after=0.8s,conn=1"])
        #expect(try Self.findings(run) == [:])
        #expect(run.capture.opens.count == 2)
    }

    /// Promise: a server close 1011 (no band) retries with the backoff → no finding.
    @Test func aServerClose1011IsRetried() throws {
        let run = try Self.run(faults: ["close:1011,after=0.8s,conn=1"])
        #expect(try Self.findings(run) == [:])
        #expect(run.capture.opens.count == 2)
    }

    /// `close on=EVENT` acts on a Phoenix event: the proxy closes with 1011 once the first
    /// `phx_reply` (the join's) passed. (On `phx_join` itself the close beats the reply, and
    /// `subscribe_to_topic` raises `PHXConnectionError` by its contract: nothing is joined.)
    /// Promise: 1011 retries with the backoff and `_rejoin_topics` joins again → no finding.
    @Test func aCloseOnTheJoinReplyIsRetriedAndRejoined() throws {
        let run = try Self.run(faults: ["close:1011,on=phx_reply,conn=1"])
        #expect(run.capture.frames.contains { $0.conn == 1 && $0.opcode == .close && $0.closeCode == 1011 && $0.action == .injected })
        #expect(try Self.findings(run) == [:])
        #expect(Self.joins(run, conn: 2) == 1)
    }

    /// Promise: `_classify_disconnect` makes 1008 terminal (`policy_violation_is_terminal`)
    /// → no reconnect, no finding.
    @Test func aServerClose1008IsFinal() throws {
        let run = try Self.run(faults: ["close:1008,after=0.8s,conn=1"])
        #expect(try Self.findings(run) == [:])
        #expect(run.capture.opens.count == 1)
        #expect(run.client.contains { $0.hasPrefix("terminal") })
    }

    /// Promise: a server close 1000 reconnects (`reconnect_on_normal_close` defaults to
    /// True) → no finding under this client's spec. phoenix.js (`onConnClose`) does not
    /// reconnect after a 1000 from the server, so the built-in `phoenix` spec reports the
    /// retry: `failed.retried`, once.
    @Test func aServerClose1000IsRetriedWhichPhoenixJSWouldNot() throws {
        let run = try Self.run(faults: ["close:1000,after=0.8s,conn=1"])
        #expect(try Self.findings(run) == [:])
        #expect(run.capture.opens.count == 2)
        #expect(try Self.findings(run, spec: "phoenix") == ["failed.retried": 1])
    }

    /// Promise: with every heartbeat reply swallowed, `_heartbeat_loop`'s deadline expires
    /// one beat after the first unanswered heartbeat and `_force_close_connection` closes
    /// with 4000, then reconnects. The client keeps its promise; what is found is the
    /// server's missing replies (`server.pong-missing`), one per connection the capture saw
    /// time out, and nothing else.
    @Test func stalledHeartbeatRepliesCloseWith4000AndReconnect() throws {
        let run = try Self.run(faults: ["stall-pongs,conn=1"], seconds: 2.5)
        let dropped = run.capture.frames.filter { $0.action == .dropped && $0.fault?.hasPrefix("stall-pongs") == true }
        #expect(!dropped.isEmpty, "stall-pongs acts on Phoenix's heartbeat replies")
        #expect(run.capture.frames.contains { $0.conn == 1 && $0.from == .client && $0.opcode == .close && $0.closeCode == 4000 })
        #expect(run.capture.opens.count >= 2)
        let found = try Self.findings(run)
        #expect(found == ["server.pong-missing": 1], "\(found) \(run.capturePath)")
    }

    /// The proxy injects a `phx_error` for the joined room:lobby at 0.8 s (V1: its messages
    /// carry no join_ref the client would check; V2 drops a message whose join_ref is not
    /// the topic's current one, and the client's refs are not known before the run).
    /// Promise (`topic_runtime.py`): `_dispatch_normal_message` marks the topic errored and
    /// `_recover_channel` rejoins it on the same socket after `_channel_rejoin_delay(0)`,
    /// 0.05-0.1 s; the sim answers `ok` → no finding under this client's spec, one socket,
    /// two joins. phoenix.js would wait `rejoinAfterMs(1)`, 1 s, so the `phoenix` spec
    /// reports the early rejoin: `channels.rejoin`, once.
    @Test func aCrashedChannelIsRejoinedOnTheLiveSocket() throws {
        let crash = #"inject:{"topic":"room:lobby","event":"phx_error","payload":{},"ref":null},after=0.8s,conn=1"#
        let run = try Self.run(faults: [crash], serializer: "v1")
        #expect(run.capture.frames.contains { $0.conn == 1 && $0.action == .injected
            && String(decoding: $0.payload, as: UTF8.self).contains("phx_error") })
        #expect(try Self.findings(run) == [:])
        #expect(run.capture.opens.count == 1)
        #expect(Self.joins(run, conn: 1) == 2, "the crashed channel is joined again on the same connection")
        #expect(try Self.findings(run, spec: "phoenix") == ["channels.rejoin": 1])
    }

    /// `clientSpec` for the peer's `floors` policy (`Tests/Peers/phoenix_client.py`): the
    /// counter resets after 5 s of uptime, and `reconnect_controller.py`
    /// `_compute_reconnect_delay` takes `max(exponential, _rapid_min_delay(rapid_count))`
    /// before its equal jitter, the floor 1 s after one session shorter than 1 s in the
    /// last minute (`_record_disconnect`), 2 s after two. The supervisor counts `attempt`
    /// up before the delay after a session that did not reach `stable_reset_s`, so the
    /// first retry is its `attempt` 1 (0.2 s): the spec's base.
    static let floorsSpec = clientSpec
        .replacingOccurrences(of: #""resetAfterUptime": 0.05,"#,
                              with: #""resetAfterUptime": 5, "shortSessions": {"uptimeBelow": 1, "within": 60, "floors": [1, 2]},"#)
        .replacingOccurrences(of: #""phases": [{"kind": "exponential", "base": 0.1,"#, with: #""phases": [{"kind": "exponential", "base": 0.2,"#)

    /// Two sessions of 0.3 s (FIN), then one that lasts. Promise (`supervisor.py`
    /// `_supervisor_loop`, `reconnect_controller.py`): after the first short session the
    /// delay is equal jitter of max(0.2, 1) = 0.5-1 s, after the second of max(0.4, 2) =
    /// 1-2 s, and the channel is rejoined each time → no finding under `floorsSpec`.
    /// Without the floors the spec allows at most 0.2 s (+ 0.25 s tolerance) for the first:
    /// at least 0.5 s breaks it (`backoff.bound`).
    @Test func shortSessionsRaiseTheReconnectFloor() throws {
        let run = try Self.run(faults: ["drop,after=0.3s,conn=1-2"], seconds: 4.5, policy: "floors")
        #expect(run.capture.opens.count == 3, "\(run.client)")
        #expect(Self.joins(run, conn: 3) == 1)
        #expect(try Self.findings(run, specText: Self.floorsSpec) == [:])
        let noFloors = Self.floorsSpec.replacingOccurrences(of: #""shortSessions": {"uptimeBelow": 1, "within": 60, "floors": [1, 2]},"#, with: "")
        #expect(noFloors != Self.floorsSpec)
        #expect(try Self.findings(run, specText: noFloors)["backoff.bound", default: 0] >= 1)
    }

    /// Promise: an upgrade refused with 503 is retried (`_classify_connect_failure`) with
    /// the backoff: after the FIN at 0.8 s the delays are 0.05-0.1 s, 0.05-0.1 s, then
    /// 0.1-0.2 s (the counter grows by one per failed connect) → no finding.
    @Test func refusedReconnectsAreRetriedWithBackoff() throws {
        let run = try Self.run(faults: ["drop,after=0.8s,conn=1", "refuse-http:503,conn=2-3"], seconds: 2)
        #expect(try Self.findings(run) == [:])
        #expect(run.capture.opens.count == 4)
        #expect(Self.joins(run, conn: 4) == 1)
    }

    /// Promise: an upgrade refused with 403 is terminal (`TERMINAL_HANDSHAKE_STATUS`) → no
    /// retry, no finding.
    @Test func a403RefusalIsFinal() throws {
        let run = try Self.run(faults: ["drop,after=0.8s,conn=1", "refuse-http:403,conn=2"])
        #expect(try Self.findings(run) == [:])
        #expect(run.capture.opens.count == 2)
    }
}

/// A blackhole under phoenix-channels-python-client, in a suite of its own so it runs
/// beside the serialized one: the client sees the dead path within its heartbeat deadline,
/// but its reconnect waits websockets' `close_timeout` (10 s, which `PHXChannelsClient`
/// does not let shorten), so the scenario takes some 12 s.
@Suite struct PhoenixBlackholeTests {
    /// Promise (`supervisor.py`): `_heartbeat_loop`'s 0.6 s acknowledgement deadline expires
    /// one beat after the first heartbeat lost in the blackhole, and `_force_close_connection`
    /// closes with 4000 (that close frame is lost too); websockets' `close()` then waits its
    /// `close_timeout` for the server's close frame and ends the TCP connection, and the
    /// supervisor reconnects with the backoff counted from that end (`delayFrom: closed`,
    /// `closeTimeout: 10` in `clientSpec`) and `_rejoin_topics` joins the channel again. The
    /// client keeps its promise: at most the server's missing heartbeat reply is reported
    /// (caused by the fault), no client finding.
    @Test func aBlackholeIsFoundByTheHeartbeatAndTheClientReconnects() throws {
        let run = try PhoenixClientTests.run(faults: ["blackhole,conn=1,after=0.8s"], seconds: 13)
        let close = run.capture.frames.first { $0.conn == 1 && $0.from == .client && $0.opcode == .close }
        #expect(close?.closeCode == 4000, "the heartbeat deadline's forced close")
        // Blackhole at 0.8 s, the deadline 0.6 s after the last acknowledged beat (0.3 s
        // apart), and a second of slack for a loaded machine: far from the 10 s close timeout.
        let opened = run.capture.opens.first?.t ?? 0
        #expect(close.map { $0.t - opened < 2_700_000 } == true, "the close comes within the deadline after the blackhole")
        #expect(run.capture.opens.count >= 2, "\(run.client)")
        #expect(PhoenixClientTests.joins(run, conn: 2) == 1, "the channel is rejoined after the reconnect")
        let found = try PhoenixClientTests.findings(run)
        #expect(Set(found.keys).isSubset(of: ["server.pong-missing"]), "\(found)")
    }
}
