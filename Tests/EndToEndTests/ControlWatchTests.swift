import Foundation
import JSON
import Testing
import TestSupport

/// `faultline ctl watch` against a running proxy: events arrive as JSON lines while a
/// Python client connects, a rule fires and the connection ends; `ctl rules` counts the
/// firing; `ctl apply` refuses a rule that could not act on an open connection.
@Suite(.serialized) struct ControlWatchTests {
    @Test func watchStreamsConnectionsAndFaults() throws {
        let rig = try ProxyRig(server: ["--mode", "bird"], proxy: ["--control", "127.0.0.1:0"])
        let line = try #require(rig.proxy.waitForLine(timeout: 20) { $0.hasPrefix("control API on http://") })
        let address = String(line.dropFirst("control API on http://".count))
        let watch = try ChildProcess.faultline(["ctl", "--control", address, "watch"])
        defer { watch.stop() }
        #expect(watch.waitForLine(timeout: 20) { $0 == #"{"type":"watching"}"# } != nil, "watch: \(watch.errorOutput)")

        #expect(try runFaultline(["ctl", "--control", address, "add", "duplicate,event=bird:pong"], timeout: 30).status == 0)
        let client = try rig.client(["--mode", "bird", "--send", Bird.event("bird:ping"), "--wait", "1"])
        #expect(client.received.compactMap(Bird.name) == ["bird:connection_established", "bird:pong", "bird:pong"])

        // The client has gone: its end is among the events (bounded wait, no sleep).
        #expect(watch.waitForLine(timeout: 20) { $0.contains(#""type":"connection-ended""#) } != nil, "watch: \(watch.output)")
        let events = watch.output.compactMap { try? JSONParser.parse($0) }
        let types = events.compactMap { $0["type"]?.stringValue }
        #expect(types.first == "watching")
        let opened = try #require(events.first { $0["type"]?.stringValue == "connection-opened" })
        #expect(opened["conn"]?.intValue == 1)
        let fault = try #require(events.first { $0["type"]?.stringValue == "fault" }, "events: \(types)")
        #expect(fault["kind"]?.stringValue == "duplicate" && fault["conn"]?.intValue == 1)
        #expect(types.firstIndex(of: "connection-opened")! < types.firstIndex(of: "fault")!)

        let rules = try runFaultline(["ctl", "--control", address, "--json", "rules"], timeout: 30)
        #expect(try JSONParser.parse(rules.stdout)["rules"]?.arrayValue?.first?["fired"]?.intValue == 1)

        let refused = try runFaultline(["ctl", "--control", address, "apply", "1", "strip-socket-id"], timeout: 30)
        #expect(refused.status == 1)
        #expect(refused.stderr.contains("rewrites the server's handshake event, which an open connection has already received"))
        _ = try rig.stopProxy()
    }

    /// In live mode (`--spec`), findings are events too: a sim client that never pings, with
    /// the handshake's activity timeout rewritten to 1 s, is reported while it is connected.
    @Test func watchStreamsLiveFindings() throws {
        let (server, serverPort) = try ProxySimTests.simServer()
        defer { server.stop() }
        let (proxy, proxyPort, _) = try ProxySimTests.proxy(upstreamPort: serverPort, [
            "--spec", "bird", "--control", "127.0.0.1:0", "--fault", "activity-timeout:1"])
        defer { proxy.stop() }
        let line = try #require(proxy.waitForLine(timeout: 20) { $0.hasPrefix("control API on http://") })
        let watch = try ChildProcess.faultline(["ctl", "--control", String(line.dropFirst("control API on http://".count)), "watch"])
        defer { watch.stop() }
        #expect(watch.waitForLine(timeout: 20) { $0 == #"{"type":"watching"}"# } != nil, "watch: \(watch.errorOutput)")
        let client = try ProxySimTests.simClient(proxyPort: proxyPort, ["--bug", "no-ping", "--no-signin", "--duration", "30s"])
        defer { client.stop() }
        let finding = try #require(watch.waitForLine(timeout: 30) { $0.contains(#""type":"finding""#) }, "watch: \(watch.output)")
        let event = try JSONParser.parse(finding)
        #expect(event["rule"]?.stringValue == "stale.ping-missing")
        #expect(event["conn"]?.intValue == 1)
        #expect(event["severity"]?.stringValue == "error")
    }
}
