import Capture
import Foundation
import Glibc
import JSON
import Testing
import TestSupport

/// A Pusher-protocol server with its own event prefix (`acme:connection_established`, not
/// `bird:` or `pusher:`): the proxy's handshake and pong faults act on it, because they
/// match the events the table's entry decodes by kind, and the analyzer's handshake and
/// pong rules judge the capture under the prefix it detects.
@Suite(.serialized) struct CustomPrefixTests {
    /// `faultline sim server --prefix acme`, ready, and its port.
    static func acmeServer() throws -> (ChildProcess, Int) {
        let server = try ChildProcess.faultline(["sim", "server", "--listen", "127.0.0.1:0", "--prefix", "acme",
                                                 "--event-interval", "0"])
        return (server, try listeningPort(of: server, "sim server"))
    }

    @Test func aCustomPrefixServerGetsTheHandshakeAndPongFaultsAndRules() throws {
        let (server, serverPort) = try Self.acmeServer()
        defer { server.stop() }
        let (proxy, proxyPort, path) = try ProxySimTests.proxy(upstreamPort: serverPort, [
            "--fault", "strip-socket-id,conn=1", "--fault", "activity-timeout:1,conn=2", "--fault", "stall-pongs,conn=2",
        ])
        defer { proxy.stop() }
        let client = try ProxySimTests.simClient(proxyPort: proxyPort, ["--prefix", "acme", "--pong-timeout", "1s",
                                                                        "--backoff-base", "100ms", "--duration", "30s"])
        defer { client.stop() }
        // Connection 1 is refused for its stripped handshake, 2 goes stale on the swallowed
        // pongs after its rewritten 1 s activity timeout, 3 connects.
        #expect(client.waitForLine(timeout: 30) { $0.contains("handshake without socket_id") } != nil, "client: \(client.output)")
        #expect(client.waitForLine(timeout: 30) { $0.contains("closed 4201") } != nil, "client: \(client.output)")
        #expect(client.waitForLine(timeout: 30) { _ in client.output.filter { $0.contains("-> connected") }.count >= 2 } != nil,
                "client: \(client.output)")
        client.stop()
        let capture = try ProxySimTests.stopProxy(proxy, capture: path)

        #expect(capture.faults.map(\.detail).contains { $0.hasPrefix("removed socket_id ") })
        #expect(capture.faults.map(\.detail).contains("rewrote activity_timeout 120 -> 1"))
        let sent = capture.frames.filter { $0.action == .injected }.map { String(decoding: $0.payload, as: UTF8.self) }
        #expect(sent.contains { $0.contains("acme:connection_established") && !$0.contains("socket_id") })
        #expect(sent.contains { text in
            text.contains("acme:connection_established")
                && [#"\"activity_timeout\":1}"#, #"\"activity_timeout\":1,"#].contains { text.contains($0) }
        })
        let swallowed = capture.frames.filter { $0.conn == 2 && $0.action == .dropped && $0.fault == "stall-pongs,conn=2" }
        #expect(!swallowed.isEmpty && swallowed.allSatisfy { String(decoding: $0.payload, as: UTF8.self).contains("acme:pong") })
        let notes = capture.records.compactMap { record -> String? in if case .note(let n) = record { n.message } else { nil } }
        #expect(notes.contains { $0.hasPrefix("protocol bird: ") })

        // The default spec learns the prefix and reads the events by kind: the stripped
        // handshake and the missing pong are the server's; the client pinged on time.
        // A pong timeout under the client's 1 s, so the deadline has passed before it gives up.
        let (status, out, err) = try runFaultline(["analyze", path, "--format", "json", "--pong-timeout", "0.5"])
        #expect(status == 1, "\(err)")
        // No --spec: detection chose the entry (and so the spec) and said why, on stderr.
        #expect(err.contains("faultline analyze: spec bird: protocol bird chosen on conn 1: the upgrade's path"), "\(err)")
        let report = try JSONParser.parse(out)
        #expect(report["prefix"] == .string("acme"))
        let findings = report["findings"]?.arrayValue ?? []
        let byRule = findings.map { ($0["rule"]?.stringValue ?? "", $0["conn"]?.intValue ?? 0) }
        #expect(byRule.contains { $0 == ("server.handshake-missing-id", 1) }, "\(out)")
        #expect(byRule.contains { $0 == ("server.pong-missing", 2) }, "\(out)")
        #expect(!byRule.contains { $0.0 == "stale.ping-missing" }, "\(out)")
    }

    /// `--spec` names the relay's entry, dialect included: no detection, and under the
    /// pusher spec's fixed prefix an `acme:pong` is no pong.
    @Test func theSpecOverridesTheRelaysDetection() throws {
        let (server, serverPort) = try Self.acmeServer()
        defer { server.stop() }
        let (proxy, proxyPort, path) = try ProxySimTests.proxy(upstreamPort: serverPort, [
            "--spec", "pusher", "--fault", "activity-timeout:1", "--fault", "stall-pongs",
        ])
        defer { proxy.stop() }
        let client = try ProxySimTests.simClient(proxyPort: proxyPort, ["--prefix", "acme", "--duration", "30s"])
        defer { client.stop() }
        #expect(client.waitForLine(timeout: 30) { $0.contains("-> connected") } != nil, "client: \(client.output)")
        client.stop()
        let capture = try ProxySimTests.stopProxy(proxy, capture: path)
        let notes = capture.records.compactMap { record -> String? in if case .note(let n) = record { n.message } else { nil } }
        #expect(!notes.contains { $0.hasPrefix("protocol ") }, "\(notes)")
        // The acme handshake is no handshake under the pusher dialect: relayed as it came.
        #expect(capture.frames.contains { String(decoding: $0.payload, as: UTF8.self).contains("acme:connection_established") })
        #expect(!capture.frames.contains { $0.action == .injected })
        #expect(!capture.faults.map(\.detail).contains { $0.hasPrefix("rewrote activity_timeout") })
    }
}
